import type { ReactorStats } from './transform-types';

/** What the pool needs of a sandbox; SandboxProcess in production. */
export interface PooledSandbox {
  readonly alive: boolean;
  /** Resolves once the sandbox can take work; rejects when it cannot start. */
  readonly ready: Promise<void>;
  kill(): void;
  exitedOnce(): Promise<void>;
  /** Since when (performance.now()) it runs what it runs now; 0 when it runs nothing. */
  runningSince(): number;
}

export interface SandboxPoolOptions {
  size: number;
  /** Sandboxes one tenant may hold at once. */
  tenantMaxConcurrency: number;
  /** Invocations of one tenant waiting beyond its share; beyond: refused. */
  tenantMaxQueue: number;
  /** Invocations waiting in all; beyond: refused. */
  maxQueue: number;
  queueTimeoutMs: number;
  /** What a refusal's Retry-After says, in seconds. */
  retryAfterSeconds: number;
  /**
   * Invocations one sandbox may be given at once: the first runs, the others wait inside it and start
   * as soon as the one before is done (no round trip to this process in between). 1: no pipelining.
   */
  pipelineDepth: number;
  /** Input bytes the invocations given to one sandbox may add up to before it takes a second one. */
  pipelineBytes: number;
  /**
   * A sandbox whose invocation has run this long takes no more: a slow transform's followers wait in
   * the queue (with its timeout and its bound), not behind it.
   */
  pipelineStallMs: number;
}

/** No sandbox for this invocation: the pool (or the tenant's share of it) is full, or closed. */
export class PoolUnavailableError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    /** It waited its whole queue timeout (rather than being refused at once). */
    readonly timedOut = false,
  ) {
    super(message);
  }
}

interface Waiter<T> {
  tenant: string;
  /** The invocation's input, in bytes (what it will hold inside the sandbox while it waits there). */
  size: number;
  resolve(sandbox: T): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/** What a held sandbox has been given and not yet given back. */
interface Load {
  runs: number;
  bytes: number;
}

/**
 * A fixed number of sandboxes, each running one invocation at a time, shared fairly between tenants.
 * A tenant holds at most `tenantMaxConcurrency` of them at once; beyond that its invocations wait in
 * its own bounded queue, and a freed sandbox goes to the next tenant in turn (round robin over the
 * tenants that are waiting and under their share), so one tenant's slow or looping transforms
 * cannot keep another tenant's from running. Sandboxes are all started at the first demand and each
 * is replaced as soon as it is discarded (after a timeout, an out-of-memory, a crash).
 *
 * A sandbox a tenant holds may be given more of that tenant's invocations before the first is done
 * (up to `pipelineDepth`, and `pipelineBytes` of input), which it runs one after the other: a tenant
 * with a steady stream of cheap transforms keeps its process busy instead of waking it once per run.
 * Never another tenant's, and not while a tenant under its share waits for a sandbox: then the held
 * sandbox takes nothing more, drains, and goes to the next tenant in turn as before.
 */
export class SandboxPool<T extends PooledSandbox> {
  private readonly all = new Set<T>();
  private readonly idle: T[] = [];
  private starting = 0;
  /** Waiting invocations per tenant, in the order tenants are served (a served tenant goes last). */
  private readonly queues = new Map<string, Array<Waiter<T>>>();
  private waiting = 0;
  private readonly running = new Map<string, number>();
  private readonly holders = new Map<T, string>();
  /** The sandboxes each tenant holds (started or starting). */
  private readonly held = new Map<string, T[]>();
  private readonly loads = new Map<T, Load>();
  /** Started sandboxes (a replacement held while it starts is not). */
  private readonly started = new Set<T>();
  private replacedCount = 0;
  private refusedCount = 0;
  private pipelinedCount = 0;
  /** Sandboxes in a row that could not start: a broken environment, not a bad transform. */
  private failedStarts = 0;
  private respawnTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly options: SandboxPoolOptions,
    private readonly create: () => T,
  ) {}

  stats(): Pick<ReactorStats, 'processes' | 'starting' | 'busy' | 'queued' | 'replaced' | 'refused' | 'pipelined'> {
    return {
      pipelined: this.pipelinedCount,
      processes: this.all.size,
      starting: this.starting,
      busy: this.holders.size,
      queued: this.waiting,
      replaced: this.replacedCount,
      refused: this.refusedCount,
    };
  }

  /** Every sandbox alive now (for stats and tests). */
  sandboxes(): T[] {
    return [...this.all];
  }

  /**
   * A sandbox for one invocation of `tenant` whose input is `size` bytes; give it back with release()
   * (or discard()) with the same size. `requeued`: an invocation handed back unstarted by a stopped
   * sandbox, which goes first in its tenant's queue and is never refused for a full queue.
   */
  acquire(tenant: string, size = 0, requeued = false): Promise<T> {
    if (this.closed) return Promise.reject(new PoolUnavailableError('The reactor is closed', this.options.retryAfterSeconds));
    if (this.queues.size === 0) {
      const sandbox = this.take(tenant, size, false);
      if (sandbox) return Promise.resolve(sandbox);
    }
    const queue = this.queues.get(tenant) ?? [];
    if (!requeued && (queue.length >= this.options.tenantMaxQueue || this.waiting >= this.options.maxQueue)) {
      this.refusedCount++;
      const whose = queue.length >= this.options.tenantMaxQueue ? "This tenant's transforms" : 'Too many transforms';
      return Promise.reject(new PoolUnavailableError(`${whose} are waiting for a sandbox; try again later`, this.options.retryAfterSeconds));
    }
    const waiting = new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = {
        tenant,
        size,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.removeWaiter(waiter);
          this.refusedCount++;
          reject(new PoolUnavailableError('No sandbox became free in time', this.options.retryAfterSeconds, true));
        }, this.options.queueTimeoutMs),
      };
      if (requeued) queue.unshift(waiter);
      else queue.push(waiter);
      this.queues.set(tenant, queue);
      this.waiting++;
    });
    this.grow();
    this.dispatch();
    return waiting;
  }

  /**
   * Takes back one invocation's hold on a sandbox (`size` as given to acquire). The sandbox goes back
   * to the pool once the last invocation given to it is done.
   */
  release(sandbox: T, size = 0): void {
    const load = this.loads.get(sandbox);
    if (load) {
      load.runs--;
      load.bytes -= size;
    }
    // Discarded: its hold, if any, moved to its replacement.
    if (!this.all.has(sandbox)) return;
    if (!sandbox.alive) {
      this.discard(sandbox);
      return;
    }
    if (load && load.runs > 0) {
      this.dispatch();
      return;
    }
    this.loads.delete(sandbox);
    this.unhold(sandbox);
    if (this.closed) {
      this.discard(sandbox);
      return;
    }
    this.idle.push(sandbox);
    this.dispatch();
  }

  /**
   * Stops a sandbox (timed out, out of memory, broken) and starts its replacement. The replacement
   * counts against the share of the tenant whose invocation broke the sandbox until it is ready: a
   * tenant whose transforms keep getting killed pays for the restarts with its own share, and never
   * takes another tenant's started sandbox meanwhile.
   */
  discard(sandbox: T): void {
    const tenant = this.holders.get(sandbox);
    const known = this.all.delete(sandbox);
    const index = this.idle.indexOf(sandbox);
    if (index !== -1) this.idle.splice(index, 1);
    this.loads.delete(sandbox);
    this.started.delete(sandbox);
    // Hands back what waited inside it (their release() finds it gone).
    if (known) sandbox.kill();
    const replacement = known && !this.closed ? this.replace() : undefined;
    if (replacement && tenant !== undefined) {
      // The hold moves to the replacement: the tenant's running count stays as it is until it is ready.
      this.holders.delete(sandbox);
      this.holders.set(replacement, tenant);
      const list = this.held.get(tenant);
      if (list) list[list.indexOf(sandbox)] = replacement;
    } else {
      this.unhold(sandbox);
      this.dispatch();
    }
  }

  private replace(): T | undefined {
    this.replacedCount++;
    // At once, demand or not: the other tenants' capacity is what a discarded sandbox took away.
    if (this.failedStarts === 0) return this.spawn();
    this.respawnLater();
    return undefined;
  }

  /** Stops accepting work, fails waiting callers, and resolves once every sandbox has exited. */
  async close(busyGraceMs: number): Promise<void> {
    this.closed = true;
    if (this.respawnTimer) clearTimeout(this.respawnTimer);
    for (const queue of this.queues.values()) {
      for (const waiter of queue) {
        clearTimeout(waiter.timer);
        waiter.reject(new PoolUnavailableError('The reactor is closed', this.options.retryAfterSeconds));
      }
    }
    this.queues.clear();
    this.waiting = 0;
    for (const sandbox of this.idle.splice(0)) sandbox.kill();
    // Busy sandboxes finish their invocation (each bounded by its deadline), then go.
    const deadline = Date.now() + busyGraceMs;
    while (this.holders.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    const exits = [...this.all].map((sandbox) => {
      sandbox.kill();
      return sandbox.exitedOnce();
    });
    this.all.clear();
    await Promise.all(exits);
  }

  private runningOf(tenant: string): number {
    return this.running.get(tenant) ?? 0;
  }

  private hold(sandbox: T, tenant: string): void {
    this.holders.set(sandbox, tenant);
    this.running.set(tenant, this.runningOf(tenant) + 1);
    const list = this.held.get(tenant);
    if (list) list.push(sandbox);
    else this.held.set(tenant, [sandbox]);
  }

  private unhold(sandbox: T): void {
    const tenant = this.holders.get(sandbox);
    if (tenant === undefined) return;
    this.holders.delete(sandbox);
    const left = this.runningOf(tenant) - 1;
    if (left > 0) this.running.set(tenant, left);
    else this.running.delete(tenant);
    const list = this.held.get(tenant);
    const index = list ? list.indexOf(sandbox) : -1;
    if (index !== -1) list!.splice(index, 1);
    if (list?.length === 0) this.held.delete(tenant);
  }

  /**
   * A sandbox for an invocation of `tenant` now, if there is one: an idle one while the tenant is under
   * its share, else (unless `othersWaiting`) one it holds with room for one more.
   */
  private take(tenant: string, size: number, othersWaiting: boolean): T | undefined {
    if (this.idle.length > 0 && this.runningOf(tenant) < this.options.tenantMaxConcurrency) {
      const sandbox = this.idle.pop()!;
      this.hold(sandbox, tenant);
      this.loads.set(sandbox, { runs: 1, bytes: size });
      return sandbox;
    }
    if (othersWaiting || this.options.pipelineDepth < 2) return undefined;
    const list = this.held.get(tenant);
    if (!list) return undefined;
    let best: T | undefined;
    let bestLoad: Load | undefined;
    const stalledBefore = performance.now() - this.options.pipelineStallMs;
    for (const sandbox of list) {
      const load = this.loads.get(sandbox);
      if (!load || !sandbox.alive || !this.started.has(sandbox)) continue;
      if (load.runs >= this.options.pipelineDepth || load.bytes + size > this.options.pipelineBytes) continue;
      const since = sandbox.runningSince();
      if (since > 0 && since < stalledBefore) continue;
      if (!bestLoad || load.runs < bestLoad.runs) {
        best = sandbox;
        bestLoad = load;
      }
    }
    if (!best || !bestLoad) return undefined;
    this.pipelinedCount++;
    bestLoad.runs++;
    bestLoad.bytes += size;
    return best;
  }

  /** Tenants waiting for a sandbox while under their share, none being idle. */
  private starvedTenants(): number {
    if (this.idle.length > 0) return 0;
    let count = 0;
    for (const tenant of this.queues.keys()) if (this.isStarved(tenant)) count++;
    return count;
  }

  private isStarved(tenant: string): boolean {
    return this.idle.length === 0 && this.queues.has(tenant) && this.runningOf(tenant) < this.options.tenantMaxConcurrency;
  }

  /**
   * Hands idle sandboxes to waiting tenants under their share, and room in the sandboxes they hold to
   * the tenants holding them, one tenant after another.
   */
  private dispatch(): void {
    while (this.waiting > 0) {
      if (this.idle.length === 0 && this.options.pipelineDepth < 2) return;
      const starved = this.starvedTenants();
      let served = false;
      for (const [tenant, queue] of this.queues) {
        // Room in a held sandbox only while no other tenant under its share waits for one.
        const othersStarved = starved - (this.isStarved(tenant) ? 1 : 0) > 0;
        const sandbox = this.take(tenant, queue[0].size, othersStarved);
        if (!sandbox) continue;
        const waiter = queue.shift()!;
        this.waiting--;
        // Served: to the back of the line (or out of it).
        this.queues.delete(tenant);
        if (queue.length > 0) this.queues.set(tenant, queue);
        clearTimeout(waiter.timer);
        waiter.resolve(sandbox);
        served = true;
        break;
      }
      if (!served) return;
    }
  }

  private removeWaiter(waiter: Waiter<T>): void {
    const queue = this.queues.get(waiter.tenant);
    const index = queue?.indexOf(waiter) ?? -1;
    if (!queue || index === -1) return;
    queue.splice(index, 1);
    this.waiting--;
    if (queue.length === 0) this.queues.delete(waiter.tenant);
  }

  /**
   * Fills the pool at the first demand (with backoff after failed starts): from then on another
   * tenant always finds a started sandbox rather than waiting for one to start.
   */
  private grow(): void {
    while (!this.closed && this.all.size < this.options.size) {
      if (this.failedStarts > 0) {
        this.respawnLater();
        return;
      }
      this.spawn();
    }
  }

  private respawnLater(): void {
    if (this.respawnTimer) return;
    const delay = Math.min(30_000, 100 * 2 ** Math.min(this.failedStarts, 9));
    this.respawnTimer = setTimeout(() => {
      this.respawnTimer = null;
      if (this.closed || this.all.size >= this.options.size) return;
      this.spawn();
    }, delay);
    this.respawnTimer.unref();
  }

  private spawn(): T | undefined {
    let sandbox: T;
    try {
      sandbox = this.create();
    } catch {
      this.failedStarts++;
      return undefined;
    }
    this.all.add(sandbox);
    this.starting++;
    sandbox.ready.then(
      () => {
        this.starting--;
        this.failedStarts = 0;
        this.unhold(sandbox);
        if (this.closed || !this.all.has(sandbox)) {
          sandbox.kill();
          return;
        }
        this.started.add(sandbox);
        this.idle.push(sandbox);
        this.dispatch();
      },
      () => {
        this.starting--;
        this.failedStarts++;
        this.unhold(sandbox);
        this.all.delete(sandbox);
        sandbox.kill();
        this.dispatch();
        this.grow();
      },
    );
    return sandbox;
  }
}
