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

interface Deferred {
  promise: Promise<string | null>;
  resolve(version: string | null): void;
}

function deferred(): Deferred {
  let resolve!: (version: string | null) => void;
  const promise = new Promise<string | null>((r) => (resolve = r));
  return { promise, resolve };
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
 * Reading stays one round trip (HMGET), and one HMGET per version is under way at a time, answering every read asked
 * for while it waited to be sent: it is sent in the check phase (setImmediate) of the turn of the event loop that asked
 * first, or as soon as the previous one is answered. Every request that joins it arrived before it was sent, so its
 * answer holds every change acknowledged before that request arrived; concurrent requests share one command instead
 * of one each. Commands fail fast instead of queueing while Redis is away.
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
      enableAutoPipelining: true,
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

  /** Per version name: whether an HMGET is under way, and the read that waits to be sent when it is answered. */
  private readonly reads = new Map<string, { inFlight: boolean; next?: Deferred }>();

  read(name: string): Promise<string | null> {
    let state = this.reads.get(name);
    if (!state) this.reads.set(name, (state = { inFlight: false }));
    if (!state.next) {
      state.next = deferred();
      if (!state.inFlight) setImmediate(() => this.send(name));
    }
    return state.next.promise;
  }

  /** Sends the waiting read: every caller joined it before this moment, so after it arrived. */
  private send(name: string): void {
    const state = this.reads.get(name)!;
    const batch = state.next;
    if (!batch || state.inFlight) return;
    state.next = undefined;
    state.inFlight = true;
    void this.readNow(name).then((version) => {
      state.inFlight = false;
      batch.resolve(version);
      if (state.next) this.send(name);
    });
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
