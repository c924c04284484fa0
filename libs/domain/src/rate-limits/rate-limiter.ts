import { Principal } from '../applications/principal';
import { TooManyRequestsError } from '../shared/domain-error';
import { Proxy } from '../proxies/proxy';
import { Bucket, describeRateLimit, RateCounter, RateDecision, RateLimit } from './rate-counter';

/** What a limit is counted per: each application (its key) or each proxy (across its callers). */
export type LimitedEntity = 'application' | 'proxy';

export interface AppliedLimit {
  entity: LimitedEntity;
  id: string;
  limit: RateLimit;
}

export interface RateLimitOutcome {
  limits: readonly AppliedLimit[];
  decision: RateDecision;
}

/** For metrics: requests refused by a limit, and requests let through uncounted because the counter was unreachable. */
export interface RateLimiterStats {
  limited: number;
  failedOpen: number;
}

const NO_LIMITS: readonly AppliedLimit[] = Object.freeze([]);
/** The limits of frozen principals (those of cached keys, shared by every request with the key), made once. */
const principalLimits = new WeakMap<Principal, readonly AppliedLimit[]>();

/**
 * The limit of the calling application: its own, else its tenant's default (Principal.rateLimit). A frozen principal
 * gets the same frozen array every time (see principalOf), so callers may compare them by identity.
 */
export function applicationLimits(principal: Principal | undefined): readonly AppliedLimit[] {
  if (!principal?.rateLimit) return NO_LIMITS;
  if (!Object.isFrozen(principal)) return [{ entity: 'application', id: principal.applicationId, limit: principal.rateLimit }];
  let limits = principalLimits.get(principal);
  if (!limits) {
    limits = Object.freeze([Object.freeze({ entity: 'application' as const, id: principal.applicationId, limit: principal.rateLimit })]);
    principalLimits.set(principal, limits);
  }
  return limits;
}

export function proxyLimits(proxy: Proxy): readonly AppliedLimit[] {
  return proxy.rateLimit ? [{ entity: 'proxy', id: proxy.id, limit: proxy.rateLimit }] : NO_LIMITS;
}

/**
 * A limit's bucket: per application or proxy, whatever its policy, so that changing a limit (a PUT of one's own, a new
 * tenant default) carries the count over (carriedTat) instead of starting a new bucket with a full burst. A count
 * the ApiKeyGuard took with a limit that has just been changed (it counts alongside the key's check, with the limit
 * it had in memory) falls in the same bucket: the first request after a change may count twice, never zero times.
 */
export function bucketKey(applied: AppliedLimit): string {
  return `${applied.entity}:${applied.id}`;
}

/** The buckets of frozen limits (a cached key's, see applicationLimits) are named once. */
const limitBuckets = new WeakMap<readonly AppliedLimit[], readonly Bucket[]>();

function bucketsOf(limits: readonly AppliedLimit[]): readonly Bucket[] {
  let buckets = limitBuckets.get(limits);
  if (!buckets) {
    buckets = limits.map((applied) => ({ key: bucketKey(applied), limit: applied.limit }));
    if (Object.isFrozen(limits)) limitBuckets.set(limits, Object.freeze(buckets));
  }
  return buckets;
}

/**
 * Rate limits of applications and proxies, counted in the shared RateCounter: one request takes one unit from every
 * limit that applies to it, or none when one of them is exhausted. When the counter cannot be reached the request is
 * let through (fail open): limits protect destinations and fairness, and an outage of Redis must not become an outage
 * of the API. The counter's adapter warns; `stats.failedOpen` counts.
 */
export class RateLimiter {
  readonly stats: RateLimiterStats = { limited: 0, failedOpen: 0 };

  constructor(private readonly counter: RateCounter) {}

  /**
   * undefined when no limit applies or the counter is unreachable; else the states, for the response's headers. At
   * once, without a promise, when the counter decides at once (see RateCounter.take).
   */
  admit(limits: readonly AppliedLimit[]): RateLimitOutcome | undefined | Promise<RateLimitOutcome | undefined> {
    if (limits.length === 0) return undefined;
    const decision = this.counter.take(bucketsOf(limits));
    return decision instanceof Promise ? decision.then((settled) => this.outcome(limits, settled)) : this.outcome(limits, decision);
  }

  private outcome(limits: readonly AppliedLimit[], decision: RateDecision | null): RateLimitOutcome | undefined {
    if (decision === null) {
      this.stats.failedOpen++;
      return undefined;
    }
    if (!decision.allowed) this.stats.limited++;
    return { limits, decision };
  }

  /** The 429 of a refused outcome, naming the exhausted limits; undefined when the request may go on. */
  static refusal(outcome: RateLimitOutcome | undefined): TooManyRequestsError | undefined {
    if (!outcome || outcome.decision.allowed) return undefined;
    const exhausted = outcome.limits.filter((_, i) => outcome.decision.buckets[i]!.remaining === 0);
    const names = (exhausted.length > 0 ? exhausted : outcome.limits).map((applied) => `the ${applied.entity}'s (${describeRateLimit(applied.limit)})`);
    return new TooManyRequestsError(`Rate limit exceeded: ${names.join(' and ')}`, outcome.decision.retryAfterSeconds);
  }
}
