import Redis from 'ioredis';

/**
 * Version counters that tell a replica whether what it cached is still current: a writer bumps a counter after its
 * transaction commits and before it answers; a reader reads the counter before reading the database and trusts a
 * cached entry only while the counter is unchanged. `read` answers null when it cannot tell (Redis unreachable),
 * and callers then go to the database.
 */
export abstract class VersionStore {
  abstract read(name: string): Promise<number | null>;
  abstract bump(name: string): Promise<void>;
  abstract close(): Promise<void>;
}

/** One process (no Redis): a local counter is the whole truth. */
export class InMemoryVersionStore extends VersionStore {
  private readonly versions = new Map<string, number>();

  async read(name: string): Promise<number> {
    return this.versions.get(name) ?? 0;
  }

  async bump(name: string): Promise<void> {
    this.versions.set(name, (this.versions.get(name) ?? 0) + 1);
  }

  async close(): Promise<void> {}
}

const PREFIX = 'gatehouse:version:';

/** Replicas share counters in Redis; commands fail fast instead of queueing while Redis is away. */
export class RedisVersionStore extends VersionStore {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {
    super();
    this.redis = new Redis(url, {
      enableAutoPipelining: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 1000,
    });
    this.redis.on('error', () => undefined);
  }

  async read(name: string): Promise<number | null> {
    try {
      const value = await this.redis.get(PREFIX + name);
      return value === null ? 0 : Number(value);
    } catch {
      return null;
    }
  }

  async bump(name: string): Promise<void> {
    // A lost bump lets other replicas serve a stale entry until it ages out: retry briefly, then say so loudly.
    // While this replica cannot reach Redis at all, readers that cannot reach it either bypass their caches.
    for (const delay of [0, 100, 300]) {
      if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
      try {
        await this.redis.incr(PREFIX + name);
        return;
      } catch (error) {
        if (delay === 300) this.onError(error);
      }
    }
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
