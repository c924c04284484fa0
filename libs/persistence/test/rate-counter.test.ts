import { createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { InMemoryRateCounter, RateCounter, SystemClock } from '@gatehouse/domain';
import { RedisRateCounter } from '@gatehouse/persistence';
import { TEST_REDIS_URL } from '@gatehouse/test-support/test-env';

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
      expect(
        (
          await counter.take([
            { key: 'wide', limit: hour(10) },
            { key: 'tight', limit: hour(1) },
          ])
        )?.allowed,
      ).toBe(false);
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

  it('carries a count over a change of limit: moving to 5/61, 5/62... after 5 per 60 s gives no fresh burst (issue 22)', async () => {
    let admitted = 0;
    for (let window = 60; window < 110; window++) {
      const takes = Array.from({ length: 5 }, () => counter.take([{ key: 'application:moving', limit: { limit: 5, windowSeconds: window } }]));
      for (const decision of await Promise.all(takes)) if (decision?.allowed) admitted++;
    }
    expect(admitted).toBe(5);
    // Raising the limit gives the difference only; and a tightened one, exhausted, waits one new interval at most.
    expect((await counter.take([{ key: 'application:moving', limit: hour(3600) }]))?.allowed).toBe(true);
    for (let i = 0; i < 2; i++) await counter.take([{ key: 'two-of-four', limit: hour(4) }]);
    const raised = await Promise.all(Array.from({ length: 10 }, () => counter.take([{ key: 'two-of-four', limit: hour(8) }])));
    expect(raised.filter((d) => d?.allowed)).toHaveLength(6);
    const tightened = await counter.take([{ key: 'two-of-four', limit: hour(2) }]);
    expect(tightened).toMatchObject({ allowed: false, buckets: [{ remaining: 0 }] });
    expect(tightened!.retryAfterSeconds).toBeLessThanOrEqual(1800);
  });

  it('counts exactly under concurrent takes', async () => {
    const decisions = await Promise.all(Array.from({ length: 50 }, () => counter.take([{ key: 'c', limit: hour(20) }])));
    expect(decisions.filter((d) => d?.allowed)).toHaveLength(20);
  });
});

/** Waits until the counter's connection answers a take (another bucket than the test's). */
async function answering(counter: RedisRateCounter): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await counter.take([{ key: `warm-up-${i}`, limit: hour(10) }])) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the Redis rate counter never answered');
}

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

  it('leases cells of a busy bucket and spends them without a round trip, counting down one per request', async () => {
    const counter = new RedisRateCounter(TEST_REDIS_URL, `test-${randomUUID()}`);
    try {
      // Connected first: on a loaded machine the first connection may take longer than the counter waits for it, and
      // a take before it fails open (null), which is the outage path, not what this test is about.
      await answering(counter);
      const before = { scripts: counter.stats.scripts, leased: counter.stats.leased };
      const remaining: number[] = [];
      for (let i = 0; i < 20; i++) {
        const decisions = await Promise.all(Array.from({ length: 25 }, () => counter.take([{ key: 'busy', limit: hour(100_000) }])));
        for (const decision of decisions) {
          expect(decision?.allowed).toBe(true);
          remaining.push(decision!.buckets[0]!.remaining);
        }
      }
      // Most of the 500 requests were counted from leases: far fewer scripts than requests.
      expect(counter.stats.leased - before.leased).toBeGreaterThan(300);
      expect(counter.stats.scripts - before.scripts + counter.stats.leased - before.leased).toBe(500);
      // Each answer says what the bucket held for this process: never more than the requests before it left.
      remaining.forEach((left, i) => expect(left).toBeLessThanOrEqual(100_000 - 1 - i));
      expect(remaining.at(-1)).toBeGreaterThan(100_000 - 1000);
    } finally {
      await counter.close();
    }
  });

  it('spends no leased cell after its lease has ended', async () => {
    const counter = new RedisRateCounter(TEST_REDIS_URL, `test-${randomUUID()}`);
    try {
      // 36,000 an hour: leases of up to 360 cells, lasting 100 ms.
      const limit = hour(36_000);
      for (let i = 0; i < 10; i++) await Promise.all(Array.from({ length: 10 }, () => counter.take([{ key: 'k', limit }])));
      expect(counter.stats.leased).toBeGreaterThan(0);
      // Until a take asks Redis, which leases (the demand is high): the next one is counted from that lease.
      for (let scripts = counter.stats.scripts; counter.stats.scripts === scripts;) await counter.take([{ key: 'k', limit }]);
      const leased = counter.stats.leased;
      await counter.take([{ key: 'k', limit }]);
      expect(counter.stats.leased).toBe(leased + 1);
      await new Promise((resolve) => setTimeout(resolve, 120));
      const scripts = counter.stats.scripts;
      await counter.take([{ key: 'k', limit }]);
      expect(counter.stats.scripts).toBe(scripts + 1);
    } finally {
      await counter.close();
    }
  });

  it('never lets replicas that lease admit more than the limit together, and serves nearly all of it', async () => {
    const prefix = `test-${randomUUID()}`;
    const replicas = [new RedisRateCounter(TEST_REDIS_URL, prefix), new RedisRateCounter(TEST_REDIS_URL, prefix)];
    // 1,000 an hour: one more every 3.6 s, so the run earns none back; leases of up to 10 cells.
    const limit = hour(1000);
    try {
      let admitted = 0;
      const loop = async (counter: RedisRateCounter) => {
        for (let i = 0; i < 150; i++) {
          const decisions = await Promise.all(Array.from({ length: 5 }, () => counter.take([{ key: 'shared', limit }])));
          for (const decision of decisions) {
            expect(decision).not.toBeNull();
            if (decision!.allowed) admitted++;
            else expect(decision!.retryAfterSeconds).toBeGreaterThan(0);
          }
        }
      };
      await Promise.all([...replicas, ...replicas].map(loop));
      expect(admitted).toBeLessThanOrEqual(1000);
      // What leases may waste: cells a lease held when it ended, and the stretch of schedule it skipped.
      expect(admitted).toBeGreaterThanOrEqual(1000 - 2 * 2 * 10);
      expect(replicas[0]!.stats.leased + replicas[1]!.stats.leased).toBeGreaterThan(100);
    } finally {
      await Promise.all(replicas.map((counter) => counter.close()));
    }
  });

  it('takes from every bucket or from none when one of them is leased', async () => {
    const prefix = `test-${randomUUID()}`;
    const counter = new RedisRateCounter(TEST_REDIS_URL, prefix);
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const wide = { key: 'wide', limit: hour(100_000) };
      const tight = { key: 'tight', limit: hour(1) };
      for (let i = 0; i < 5; i++) await Promise.all(Array.from({ length: 20 }, () => counter.take([wide])));
      expect(counter.stats.leased).toBeGreaterThan(0);
      expect((await counter.take([tight]))?.allowed).toBe(true);
      const schedule = await redis.get(`${prefix}:ratelimit:wide`);
      const scripts = counter.stats.scripts;
      for (let i = 0; i < 5; i++) expect((await counter.take([wide, tight]))?.allowed).toBe(false);
      // Each refusal was Redis's (the tight bucket has no lease), and took nothing from the wide bucket.
      expect(counter.stats.scripts).toBe(scripts + 5);
      expect(await redis.get(`${prefix}:ratelimit:wide`)).toBe(schedule);
    } finally {
      redis.disconnect();
      await counter.close();
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

describe('RedisRateCounter under a slow event loop or a silent Redis (issue 22 section 3)', () => {
  it('honours a count Redis answered while the event loop was blocked past the timeout: no fail-open', async () => {
    const counter = new RedisRateCounter(TEST_REDIS_URL, `test-${randomUUID()}`);
    try {
      expect((await counter.take([{ key: 'exhausted', limit: hour(1) }]))?.allowed).toBe(true);
      for (let run = 0; run < 3; run++) {
        const pending = counter.take([{ key: 'exhausted', limit: hour(1) }]);
        // take() queued the send for this turn's check phase; this runs right after it, the command written: the
        // reply arrives while the loop is blocked, and the timer is overdue when the loop comes back.
        setImmediate(() => {
          const until = performance.now() + 1200;
          while (performance.now() < until);
        });
        expect(await pending).toMatchObject({ allowed: false });
      }
      expect(counter.stats).toMatchObject({ unavailable: 0, timedOut: 0 });
    } finally {
      await counter.close();
    }
  });

  it('still fails open, about 500 ms after sending, when Redis accepts the command and never answers', async () => {
    const silent = await startSilentRedis();
    const seen: unknown[] = [];
    const counter = new RedisRateCounter(`redis://127.0.0.1:${silent.port}`, 'test', (error) => seen.push(error));
    try {
      const started = performance.now();
      expect(await counter.take([{ key: 'k', limit: hour(1) }])).toBeNull();
      const took = performance.now() - started;
      expect(took).toBeGreaterThanOrEqual(450);
      expect(took).toBeLessThan(5000);
      expect(silent.scripts()).toBeGreaterThan(0);
      expect(counter.stats).toMatchObject({ unavailable: 1, timedOut: 1 });
      expect(String(seen[0])).toMatch(/did not answer within 500 ms/);
    } finally {
      await counter.close();
      silent.close();
    }
  });
});

/** Speaks enough RESP for ioredis to be ready (INFO, anything else +OK), then never answers a script. */
async function startSilentRedis(): Promise<{ port: number; scripts: () => number; close: () => void }> {
  let scripts = 0;
  const server = createServer((socket) => {
    socket.on('data', (chunk) => {
      for (const command of chunk.toString('latin1').matchAll(/\*\d+\r\n\$\d+\r\n([A-Za-z]+)\r\n/g)) {
        const name = command[1]!.toUpperCase();
        if (name === 'EVALSHA' || name === 'EVAL') scripts++;
        else if (name === 'INFO') {
          const info = '# Server\r\nredis_version:7.0.0\r\nloading:0\r\n';
          socket.write(`$${info.length}\r\n${info}\r\n`);
        } else socket.write('+OK\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    scripts: () => scripts,
    close: () => {
      server.close();
    },
  };
}

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
