import { describeRateLimit, RateLimit, sameRateLimit } from './rate-counter';

/** The audit message's account of a rate-limit change (of an application or a proxy), '' when it did not change. */
export function rateLimitChange(before: RateLimit | null | undefined, after: RateLimit | null | undefined): string {
  if (sameRateLimit(before, after)) return '';
  return after ? `; rate limit set to ${describeRateLimit(after)}` : '; rate limit removed';
}
