import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';

/**
 * Versions that tell a replica whether what it cached is still current: a writer bumps a version after its transaction
 * commits and before it answers; a reader reads the version before reading the database and trusts a cached entry only
 * while the version is unchanged. `read` answers null when it cannot tell (Redis unreachable, or its identity not yet
 * known), and callers then go to the database and keep nothing.
 */
export abstract class VersionStore {
  abstract read(name: string): Promise<string | null>;
  abstract bump(name: string): Promise<void>;
  abstract close(): Promise<void>;
}

const scopes = new AsyncLocalStorage<Map<string, Promise<string | null>>>();

/**
 * Runs `fn` (one request, with everything it awaits) in a scope of its own: within it, VersionScopedStore reads each
 * version once, and later reads of the same request get that answer. A request is then judged against the state
 * of the first read it made: that read was sent after the request arrived, so whatever a writer had acknowledged by
 * then (a revocation) is in it. A bump made inside the scope (the request's own write) drops the remembered version.
 */
export function inVersionScope<T>(fn: () => T): T {
  return scopes.run(new Map(), fn);
}

/** A VersionStore that reads each version once per request scope (inVersionScope); outside one, every time. */
export class VersionScopedStore extends VersionStore {
  constructor(private readonly inner: VersionStore) {
    super();
  }

  read(name: string): Promise<string | null> {
    const scope = scopes.getStore();
    if (!scope) return this.inner.read(name);
    let version = scope.get(name);
    if (!version) {
      version = this.inner.read(name);
      scope.set(name, version);
    }
    return version;
  }

  async bump(name: string): Promise<void> {
    scopes.getStore()?.delete(name);
    try {
      await this.inner.bump(name);
    } finally {
      // Also a read made while the bump was under way: it may have answered the version before it.
      scopes.getStore()?.delete(name);
    }
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** One process (no Redis): a local counter is the whole truth. */
export class InMemoryVersionStore extends VersionStore {
  private readonly versions = new Map<string, number>();

  async read(name: string): Promise<string> {
    return String(this.versions.get(name) ?? 0);
  }

  async bump(name: string): Promise<void> {
    this.versions.set(name, (this.versions.get(name) ?? 0) + 1);
  }

  async close(): Promise<void> {}
}

// A hash per entity type: {epoch, count}. (Not the `gatehouse:version:*` strings of earlier releases, which a replica
// of an earlier release may still INCR: a hash under that name would break both.)
const PREFIX = 'gatehouse:cache-version:';
const RUN_ID = /^run_id:([0-9a-f]+)\s*$/m;

/**
 * Replicas share versions in Redis. A plain counter is not enough: after a restart without persistence, a FLUSHALL, an
 * eviction, or a failover to a replica that missed the last writes, it starts again from values that entries cached
 * before still carry, and a key deleted since (or a proxy) would authenticate (or forward) again. So a version names
 * the Redis instance and its data as well as the count, `<run_id>/<epoch>/<count>`:
 * - `run_id` is the instance's own (INFO server), read each time the connection is (re)established: a restart or a
 *   failover always breaks the connection and lands on a process with another run_id, so every entry cached before
 *   stops matching; between the break and the new run_id nothing is trusted;
 * - `epoch` is random, kept in the same hash as the count, so whatever removes the count (a flush, an eviction, data
 *   not persisted) removes the epoch with it; the first reader that finds no epoch writes a new one (HSETNX) and
 *   trusts nothing until it is there;
 * - `count` moves on every committed change (HINCRBY).
 * Reading stays one round trip (HMGET), and one HMGET answers every read of a version asked for in the same turn of the
 * event loop: it is sent in the turn's check phase (setImmediate), after the I/O callbacks of every request that joins
 * it, so each of those requests arrived before it was sent and its answer holds every change acknowledged before that
 * request arrived. Concurrent requests share one command instead of one each, and none waits for an earlier one to be
 * answered (no auto-pipelining here: it keeps one pipeline under way and queues the rest behind it). Commands fail
 * fast instead of queueing while Redis is away.
 */
export class RedisVersionStore extends VersionStore {
  private readonly redis: Redis;
  /** The run_id of the instance the current connection reached; undefined until known, and from a disconnect on. */
  private runId: string | undefined;
  /** Moves on every disconnect, so an answer that arrives on a later connection than its question is not used. */
  private connection = 0;

  constructor(
    url: string,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {
    super();
    this.redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 1000,
    });
    this.redis.on('error', () => undefined);
    this.redis.on('close', () => {
      this.runId = undefined;
      this.connection++;
    });
    this.redis.on('ready', () => void this.identify());
  }

  private async identify(): Promise<void> {
    const connection = this.connection;
    try {
      const runId = RUN_ID.exec(await this.redis.info('server'))?.[1];
      if (connection === this.connection) this.runId = runId;
    } catch {
      // Left unknown: reads answer null until the next connection identifies itself.
    }
  }

  /** Per version name, the read that waits to be sent (in this turn's check phase), joined by every read asked for. */
  private readonly waiting = new Map<string, Promise<string | null>>();

  read(name: string): Promise<string | null> {
    let read = this.waiting.get(name);
    if (!read) {
      read = new Promise((resolve) =>
        setImmediate(() => {
          // Sent now: a read asked for from here on waits for the next one.
          this.waiting.delete(name);
          resolve(this.readNow(name));
        }),
      );
      this.waiting.set(name, read);
    }
    return read;
  }

  private async readNow(name: string): Promise<string | null> {
    const runId = this.runId;
    const connection = this.connection;
    if (runId === undefined) return null;
    try {
      const [epoch, count] = await this.redis.hmget(PREFIX + name, 'epoch', 'count');
      if (connection !== this.connection) return null;
      if (epoch === null) {
        await this.redis.hsetnx(PREFIX + name, 'epoch', randomBytes(16).toString('hex'));
        return null;
      }
      return `${runId}/${epoch}/${count ?? 0}`;
    } catch {
      return null;
    }
  }

  async bump(name: string): Promise<void> {
    // A lost bump lets other replicas serve a stale entry until it ages out: retry briefly, then say so loudly.
    // While this replica cannot reach Redis at all, readers that cannot reach it either bypass their caches, and a
    // Redis that comes back after a restart has another run_id, which no cached entry carries.
    for (const delay of [0, 100, 300]) {
      if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
      try {
        await this.redis.hincrby(PREFIX + name, 'count', 1);
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
