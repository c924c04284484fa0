import { createServer } from 'node:net';
import { randomUUID } from 'node:crypto';
import { InMemoryRateCounter, RateCounter, SystemClock } from '@gatehouse/domain';
import { RedisRateCounter } from '@gatehouse/persistence';
import { TEST_REDIS_URL } from '../../../test/support/test-env';

const hour = (limit: number) => ({ limit, windowSeconds: 3600 });

/** The same semantics from both adapters: the domain's GCRA in memory, and its Lua twin shared through Redis. */
describe.each([
  ['in memory', () => new InMemoryRateCounter(new SystemClock())],
  ['Redis', () => new RedisRateCounter(TEST_REDIS_URL, `test-${randomUUID()}`)],
])('RateCounter %s', (_, make: () => RateCounter) => {
  let counter: RateCounter;
  beforeEach(() => (counter = make()));
  afterEach(async () => {
    if (counter instanceof RedisRateCounter) await counter.close();
  });

  it('allows `limit` requests in a burst, counting down, then refuses with the wait of one interval', async () => {
    const remaining: number[] = [];
    for (let i = 0; i < 4; i++) {
      const decision = await counter.take([{ key: 'a', limit: hour(4) }]);
      expect(decision?.allowed).toBe(true);
      remaining.push(decision!.buckets[0]!.remaining);
    }
    expect(remaining).toEqual([3, 2, 1, 0]);
    const refused = await counter.take([{ key: 'a', limit: hour(4) }]);
    expect(refused).toMatchObject({ allowed: false, buckets: [{ remaining: 0, limit: hour(4) }] });
    // One interval is 900 s; a little of it has passed since the burst.
    expect(refused!.retryAfterSeconds).toBeGreaterThan(890);
    expect(refused!.retryAfterSeconds).toBeLessThanOrEqual(900);
    expect(refused!.buckets[0]!.resetSeconds).toBeGreaterThan(3590);
  });

  it('takes from every bucket of a request or from none', async () => {
    expect((await counter.take([{ key: 'tight', limit: hour(1) }]))?.allowed).toBe(true);
    for (let i = 0; i < 3; i++) {
      expect((await counter.take([{ key: 'wide', limit: hour(10) }, { key: 'tight', limit: hour(1) }]))?.allowed).toBe(false);
    }
    const wide = await counter.take([{ key: 'wide', limit: hour(10) }]);
    expect(wide!.buckets[0]!.remaining).toBe(9);
  });

  it('keeps buckets apart', async () => {
    await counter.take([{ key: 'x', limit: hour(1) }]);
    expect((await counter.take([{ key: 'x', limit: hour(1) }]))?.allowed).toBe(false);
    expect((await counter.take([{ key: 'y', limit: hour(1) }]))?.allowed).toBe(true);
  });

  it('admits again after the interval', async () => {
    const fast = { limit: 2, windowSeconds: 1 };
    await counter.take([{ key: 'f', limit: fast }]);
    await counter.take([{ key: 'f', limit: fast }]);
    expect((await counter.take([{ key: 'f', limit: fast }]))?.allowed).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await counter.take([{ key: 'f', limit: fast }]))?.allowed).toBe(true);
  });

  it('counts exactly under concurrent takes', async () => {
    const decisions = await Promise.all(Array.from({ length: 50 }, () => counter.take([{ key: 'c', limit: hour(20) }])));
    expect(decisions.filter((d) => d?.allowed)).toHaveLength(20);
  });
});

describe('RedisRateCounter', () => {
  it('shares buckets between instances (replicas) with the same prefix, and not across prefixes', async () => {
    const prefix = `test-${randomUUID()}`;
    const a = new RedisRateCounter(TEST_REDIS_URL, prefix);
    const b = new RedisRateCounter(TEST_REDIS_URL, prefix);
    const other = new RedisRateCounter(TEST_REDIS_URL, `test-${randomUUID()}`);
    try {
      expect((await a.take([{ key: 'k', limit: hour(2) }]))?.allowed).toBe(true);
      expect((await b.take([{ key: 'k', limit: hour(2) }]))?.allowed).toBe(true);
      expect((await a.take([{ key: 'k', limit: hour(2) }]))?.allowed).toBe(false);
      expect((await b.take([{ key: 'k', limit: hour(2) }]))?.allowed).toBe(false);
      expect((await other.take([{ key: 'k', limit: hour(2) }]))?.allowed).toBe(true);
    } finally {
      await Promise.all([a.close(), b.close(), other.close()]);
    }
  });

  it('answers null at once when Redis cannot be reached, and says so', async () => {
    const port = await closedPort();
    const seen: unknown[] = [];
    const counter = new RedisRateCounter(`redis://127.0.0.1:${port}`, 'test', (error) => seen.push(error));
    try {
      const started = Date.now();
      expect(await counter.take([{ key: 'k', limit: hour(1) }])).toBeNull();
      expect(await counter.take([{ key: 'k', limit: hour(1) }])).toBeNull();
      expect(Date.now() - started).toBeLessThan(5000);
      expect(seen).toHaveLength(2);
      expect(counter.stats.unavailable).toBe(2);
    } finally {
      await counter.close();
    }
  });
});

/** A port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
