import { Clock } from '../shared/clock';
import { FieldErrorCollector } from '../shared/domain-error';

/** At most `limit` requests in any `windowSeconds`, as a burst or spread out. */
export interface RateLimit {
  limit: number;
  windowSeconds: number;
}

export const MAX_RATE_LIMIT = 1_000_000;
export const MAX_RATE_LIMIT_WINDOW_SECONDS = 86_400;

/** `rate_limit` of an application, a proxy or a tenant's default: positive integers within sane maxima. */
export function validateRateLimit(value: RateLimit | null | undefined, field: string, errors: FieldErrorCollector): void {
  if (value == null) return;
  if (typeof value !== 'object' || Array.isArray(value)) {
    errors.add(field, 'must be an object with limit and window_seconds');
    return;
  }
  if (!Number.isInteger(value.limit) || value.limit < 1 || value.limit > MAX_RATE_LIMIT) {
    errors.add(`${field}.limit`, `must be an integer from 1 to ${MAX_RATE_LIMIT}`);
  }
  if (!Number.isInteger(value.windowSeconds) || value.windowSeconds < 1 || value.windowSeconds > MAX_RATE_LIMIT_WINDOW_SECONDS) {
    errors.add(`${field}.window_seconds`, `must be an integer from 1 to ${MAX_RATE_LIMIT_WINDOW_SECONDS}`);
  }
}

/** "100 requests per 60 s", for audit messages and 429 details. */
export function describeRateLimit(limit: RateLimit | null | undefined): string {
  return limit ? `${limit.limit} request${limit.limit === 1 ? '' : 's'} per ${limit.windowSeconds} s` : 'none';
}

export function sameRateLimit(a: RateLimit | null | undefined, b: RateLimit | null | undefined): boolean {
  return (a ?? null) === (b ?? null) || (!!a && !!b && a.limit === b.limit && a.windowSeconds === b.windowSeconds);
}

/** One counter: its name (an application, a proxy, a client address) and the limit it is counted against. */
export interface Bucket {
  key: string;
  limit: RateLimit;
}

export interface BucketState {
  limit: RateLimit;
  /** Requests still allowed right now. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
}

export interface RateDecision {
  allowed: boolean;
  /** When refused: seconds until the request would be allowed (at least 1); 0 when allowed. */
  retryAfterSeconds: number;
  /** One state per bucket, in the order asked. */
  buckets: BucketState[];
}

/**
 * The one counting mechanism of the service, behind failed-authentication throttling and rate limits alike: the
 * generic cell rate algorithm (GCRA), which keeps one number per bucket, the theoretical arrival time (TAT) of the
 * next request. A request is allowed when taking one unit from every bucket keeps each within its limit; then all
 * are taken, else none (a proxy invocation counted against both its proxy and its caller's application is refused
 * without using up either). Adapters: in memory (one process) and Redis (one Lua script, so replicas share counts).
 */
export abstract class RateCounter {
  /**
   * null when the counter cannot be reached: callers let the request through (fail open). The decision comes at once,
   * without a promise, when the adapter can make it locally (in memory; from a lease of the Redis adapter).
   */
  abstract take(buckets: readonly Bucket[]): RateDecision | null | Promise<RateDecision | null>;
}

// Floating-point slack, so 3 per second leaves 2 after one request rather than 1.9999999.
const EPSILON = 1e-9;

/** What GCRA says for one bucket at `nowMs`, given its stored TAT (undefined: a full bucket). */
export function gcra(
  storedTat: number | undefined,
  nowMs: number,
  limit: RateLimit,
): { allowed: boolean; newTat: number; state: BucketState; retryMs: number } {
  const windowMs = limit.windowSeconds * 1000;
  const interval = windowMs / limit.limit;
  const tat = storedTat === undefined || storedTat < nowMs ? nowMs : storedTat;
  const newTat = tat + interval;
  const allowAt = newTat - windowMs;
  if (allowAt > nowMs) {
    const remaining = Math.max(0, Math.floor((windowMs - (tat - nowMs)) / interval + EPSILON));
    return { allowed: false, newTat: tat, state: { limit, remaining, resetSeconds: Math.ceil((tat - nowMs) / 1000) }, retryMs: allowAt - nowMs };
  }
  const remaining = Math.max(0, Math.floor((windowMs - (newTat - nowMs)) / interval + EPSILON));
  return { allowed: true, newTat, state: { limit, remaining, resetSeconds: Math.ceil((newTat - nowMs) / 1000) }, retryMs: 0 };
}

/** A bucket's stored state: its TAT, and the interval (ms per request) of the limit it was counted under. */
export interface StoredTat {
  tat: number;
  intervalMs: number;
}

export function intervalMsOf(limit: RateLimit): number {
  return (limit.windowSeconds * 1000) / limit.limit;
}

/**
 * The stored TAT in the terms of `limit`, which may not be the limit it was counted under: a bucket is named after
 * what it counts (an application, a proxy), not after its policy, so that changing a limit never hands out a fresh
 * burst (a key limited to 5 per 60 s that PUT itself to 5/61, 5/62... was a new full bucket each time). What carries
 * over is the requests still counted, (TAT - now) / old interval, each taking the new interval, and at most one whole
 * new window: a bucket exhausted under the old limit is exhausted under the new one, and one with room keeps what it
 * had used.
 */
export function carriedTat(stored: StoredTat | undefined, nowMs: number, limit: RateLimit): number | undefined {
  if (stored === undefined || stored.tat <= nowMs) return stored?.tat;
  const interval = intervalMsOf(limit);
  if (Math.abs(stored.intervalMs - interval) < 1e-6) return stored.tat;
  return nowMs + Math.min(((stored.tat - nowMs) / stored.intervalMs) * interval, limit.windowSeconds * 1000);
}

/** Seconds for Retry-After: whole, and at least 1 (a client told 0 would retry at once). */
export function retryAfterSeconds(retryMs: number): number {
  return Math.max(1, Math.ceil(retryMs / 1000));
}

const MAX_IN_MEMORY_BUCKETS = 100_000;

/** One process (no Redis): the same GCRA over a map, bounded so that many addresses cannot grow it without end. */
export class InMemoryRateCounter extends RateCounter {
  private readonly tats = new Map<string, StoredTat>();

  constructor(private readonly clock: Clock) {
    super();
  }

  take(buckets: readonly Bucket[]): RateDecision {
    const now = this.clock.now().getTime();
    const steps = buckets.map((bucket) => gcra(carriedTat(this.tats.get(bucket.key), now, bucket.limit), now, bucket.limit));
    const allowed = steps.every((step) => step.allowed);
    if (allowed) {
      buckets.forEach((bucket, i) => {
        this.tats.delete(bucket.key);
        this.tats.set(bucket.key, { tat: steps[i]!.newTat, intervalMs: intervalMsOf(bucket.limit) });
      });
      this.evict(now);
    }
    const retryMs = Math.max(0, ...steps.map((step) => step.retryMs));
    return { allowed, retryAfterSeconds: allowed ? 0 : retryAfterSeconds(retryMs), buckets: steps.map((step) => step.state) };
  }

  /** A TAT in the past is a full bucket, the same as none: dropped first; then the least recently taken. */
  private evict(now: number): void {
    if (this.tats.size <= MAX_IN_MEMORY_BUCKETS) return;
    for (const [key, { tat }] of this.tats) if (tat <= now) this.tats.delete(key);
    for (const key of this.tats.keys()) {
      if (this.tats.size <= MAX_IN_MEMORY_BUCKETS) break;
      this.tats.delete(key);
    }
  }
}
