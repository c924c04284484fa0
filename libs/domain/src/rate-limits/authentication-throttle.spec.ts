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

  describe('a blocked address does not lock its neighbours out (issue 22 section 3)', () => {
    const shared = '203.0.113.7';

    it('keeps serving a credential that authenticated from the address before; refuses every other unseen', async () => {
      const s = setup();
      s.throttle.succeeded(shared, 'hash-of-a-neighbour-key');
      for (let i = 0; i < 4; i++) await s.fail(shared).catch(() => undefined);
      expect(s.throttle.blockedAddresses()).toBe(1);
      const calls = s.counter.calls;
      expect(() => s.throttle.check(shared, 'hash-of-a-neighbour-key')).not.toThrow();
      expect(() => s.throttle.check(shared, () => 'hash-of-a-neighbour-key')).not.toThrow();
      // A guess, right or wrong, is refused before any lookup: the guesser learns nothing from it.
      expect(() => s.throttle.check(shared, 'hash-of-a-guess')).toThrow(TooManyRequestsError);
      expect(() => s.throttle.check(shared)).toThrow(TooManyRequestsError);
      // Known from another address is not known from this one.
      s.throttle.succeeded('198.51.100.1', 'hash-of-a-far-key');
      expect(() => s.throttle.check(shared, 'hash-of-a-far-key')).toThrow(TooManyRequestsError);
      expect(s.counter.calls).toBe(calls);
      expect(s.throttle.stats.throttled).toBe(4);
    });

    it('forgets a credential a day after it last authenticated from there, and counts blocked addresses as they end', async () => {
      const s = setup(1);
      s.throttle.succeeded(shared, 'k');
      for (let i = 0; i < 2; i++) await s.fail(shared).catch(() => undefined);
      for (let i = 0; i < 2; i++) await s.fail('198.51.100.1').catch(() => undefined);
      expect(s.throttle.blockedAddresses()).toBe(2);
      s.clock.advance(60_000);
      expect(s.throttle.blockedAddresses()).toBe(0);
      s.clock.advance(24 * 3600_000);
      for (let i = 0; i < 2; i++) await s.fail(shared).catch(() => undefined);
      expect(() => s.throttle.check(shared, 'k')).toThrow(TooManyRequestsError);
    });

    it('remembers nothing without a policy', () => {
      const s = setup();
      const off = new AuthenticationThrottle(s.counter, null, s.clock);
      off.succeeded(() => {
        throw new Error('the address is not worked out');
      }, 'k');
      expect(off.blockedAddresses()).toBe(0);
    });
  });
});
