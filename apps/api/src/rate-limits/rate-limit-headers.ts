import type { ServerResponse } from 'node:http';
import { AppliedLimit, RateLimiter, RateLimitOutcome } from '@gatehouse/domain';

export const RATE_LIMIT_FIELDS = new Set(['ratelimit-policy', 'ratelimit']);

/**
 * The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers): one policy per limit that applied, named
 * after what it counts (`"application"`, `"proxy"`), with its quota `q` and window `w`; and the live state, the
 * requests `r` remaining and the seconds `t` until the quota is whole again. On successful and refused responses alike.
 */
export function setRateLimitHeaders(res: ServerResponse, outcome: RateLimitOutcome): void {
  const { limits, decision } = outcome;
  res.setHeader('ratelimit-policy', policyOf(limits));
  res.setHeader(
    'ratelimit',
    limits.map((applied, i) => `"${applied.entity}";r=${decision.buckets[i]!.remaining};t=${decision.buckets[i]!.resetSeconds}`).join(', '),
  );
}

/** The policies of frozen limits (a cached key's, see applicationLimits) are written once. */
const policies = new WeakMap<readonly AppliedLimit[], string>();

function policyOf(limits: readonly AppliedLimit[]): string {
  let policy = policies.get(limits);
  if (policy === undefined) {
    policy = limits.map((applied) => `"${applied.entity}";q=${applied.limit.limit};w=${applied.limit.windowSeconds}`).join(', ');
    if (Object.isFrozen(limits)) policies.set(limits, policy);
  }
  return policy;
}

/** Counts the request against its limits and sets the headers; throws the 429 (Retry-After) when one is exhausted. */
export async function enforceRateLimits(limiter: RateLimiter, res: ServerResponse, limits: readonly AppliedLimit[]): Promise<void> {
  if (limits.length === 0) return;
  applyRateLimitOutcome(res, await limiter.admit(limits));
}

/** Sets the headers of a counted request (none when uncounted); throws the 429 (Retry-After) when it was refused. */
export function applyRateLimitOutcome(res: ServerResponse, outcome: RateLimitOutcome | undefined): void {
  if (!outcome) return;
  setRateLimitHeaders(res, outcome);
  const refusal = RateLimiter.refusal(outcome);
  if (refusal) throw refusal;
}
