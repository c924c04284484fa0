import { AuthenticationError, TooManyRequestsError } from '../shared/domain-error';
import { FixedClock } from '../testing/in-memory-ports';
import { AuthenticationThrottle } from './authentication-throttle';
import { Bucket, InMemoryRateCounter, RateCounter, RateDecision } from './rate-counter';

class CountingCounter extends RateCounter {
  calls = 0;
  constructor(private readonly inner: RateCounter | null) {
    super();
  }
  async take(buckets: Bucket[]): Promise<RateDecision | null> {
    this.calls++;
    return this.inner ? this.inner.take(buckets) : null;
  }
}

function setup(limit = 3) {
  const clock = new FixedClock();
  const counter = new CountingCounter(new InMemoryRateCounter(clock));
  const throttle = new AuthenticationThrottle(counter, { limit, windowSeconds: 60 }, clock);
  const fail = (client: string | undefined) => throttle.fail(client, new AuthenticationError('bad key'));
  return { clock, counter, throttle, fail };
}

describe('AuthenticationThrottle', () => {
  it('passes `limit` failures through, then answers 429 with the wait', async () => {
    const s = setup();
    for (let i = 0; i < 3; i++) await expect(s.fail('203.0.113.7')).rejects.toBeInstanceOf(AuthenticationError);
    const error = await s.fail('203.0.113.7').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TooManyRequestsError);
    expect((error as TooManyRequestsError).retryAfterSeconds).toBe(20);
  });

  it('refuses a blocked address before any lookup, without counting, until the wait is over', async () => {
    const s = setup();
    for (let i = 0; i < 4; i++) await s.fail('203.0.113.7').catch(() => undefined);
    const calls = s.counter.calls;
    expect(() => s.throttle.check('203.0.113.7')).toThrow(TooManyRequestsError);
    expect(s.counter.calls).toBe(calls);
    expect(() => s.throttle.check('198.51.100.1')).not.toThrow();
    s.clock.advance(20_000);
    expect(() => s.throttle.check('203.0.113.7')).not.toThrow();
    // One interval later the address has one attempt again, not a full bucket.
    await expect(s.fail('203.0.113.7')).rejects.toBeInstanceOf(AuthenticationError);
    await expect(s.fail('203.0.113.7')).rejects.toBeInstanceOf(TooManyRequestsError);
    expect(s.throttle.stats.throttled).toBe(3);
  });

  it('counts addresses apart', async () => {
    const s = setup(1);
    await expect(s.fail('203.0.113.7')).rejects.toBeInstanceOf(AuthenticationError);
    await expect(s.fail('203.0.113.7')).rejects.toBeInstanceOf(TooManyRequestsError);
    await expect(s.fail('198.51.100.1')).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('does not count without an address or without a policy', async () => {
    const s = setup(1);
    for (let i = 0; i < 3; i++) await expect(s.fail(undefined)).rejects.toBeInstanceOf(AuthenticationError);
    const off = new AuthenticationThrottle(s.counter, null, s.clock);
    for (let i = 0; i < 3; i++) await expect(off.fail('203.0.113.7', new AuthenticationError())).rejects.toBeInstanceOf(AuthenticationError);
    expect(s.counter.calls).toBe(0);
  });

  it('lets failures through as they are when the counter cannot be reached (fail open)', async () => {
    const clock = new FixedClock();
    const throttle = new AuthenticationThrottle(new CountingCounter(null), { limit: 1, windowSeconds: 60 }, clock);
    for (let i = 0; i < 3; i++) await expect(throttle.fail('203.0.113.7', new AuthenticationError())).rejects.toBeInstanceOf(AuthenticationError);
    expect(throttle.stats.uncounted).toBe(3);
  });
});
