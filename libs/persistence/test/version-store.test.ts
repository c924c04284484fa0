import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { RedisVersionStore } from '@gatehouse/persistence';
import { TEST_REDIS_URL } from '@gatehouse/test-support/test-env';

/** Until the store knows its Redis (run_id) and the version has an epoch: reads answer null before. */
async function readable(store: RedisVersionStore, name: string): Promise<string> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
    const version = await store.read(name);
    if (version !== null) return version;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('versions not readable within 10 s');
}

/**
 * Counts the HMGETs a store sends (they still go to Redis), and holds their answers back while `hold` is set: the
 * answer arrives, but the store sees it only once the test releases it.
 */
function instrument(store: RedisVersionStore): { count: number; hold?: Promise<void> } {
  const redis = (store as unknown as { redis: Redis }).redis;
  const state: { count: number; hold?: Promise<void> } = { count: 0 };
  const hmget = redis.hmget.bind(redis) as (...args: unknown[]) => Promise<(string | null)[]>;
  (redis as unknown as { hmget: unknown }).hmget = async (...args: unknown[]) => {
    state.count++;
    const hold = state.hold;
    const answer = await hmget(...args);
    await hold;
    return answer;
  };
  return state;
}

describe('RedisVersionStore: reads shared by concurrent requests', () => {
  let reader: RedisVersionStore;
  let writer: RedisVersionStore;
  // A version of its own: nothing else on this Redis bumps it.
  const name = `test-${randomUUID()}`;
  beforeAll(() => {
    reader = new RedisVersionStore(TEST_REDIS_URL);
    writer = new RedisVersionStore(TEST_REDIS_URL);
  });
  afterAll(async () => {
    await reader.close();
    await writer.close();
  });

  it('answers the reads asked for together with one HMGET', async () => {
    const version = await readable(reader, name);
    const hmgets = instrument(reader);
    const versions = await Promise.all(Array.from({ length: 50 }, () => reader.read(name)));
    expect(new Set(versions)).toEqual(new Set([version]));
    expect(hmgets.count).toBe(1);
  });

  it('never answers a read with an HMGET sent before it was asked: a bump acknowledged in between is seen', async () => {
    const before = await readable(reader, name);
    const hmgets = instrument(reader);
    let release!: () => void;
    hmgets.hold = new Promise((resolve) => (release = resolve));
    // A read under way (its HMGET sent, its answer held back) when another replica's bump is acknowledged...
    const underWay = reader.read(name);
    while (hmgets.count === 0) await new Promise((resolve) => setImmediate(resolve));
    await writer.bump(name);
    hmgets.hold = undefined;
    // ...and a read asked after that: it must not share the one under way, which predates the bump.
    const after = reader.read(name);
    release();
    expect(await underWay).toBe(before);
    expect(await after).toBe(await writer.read(name));
    expect(await after).not.toBe(before);
    expect(hmgets.count).toBe(2);
  });
});
