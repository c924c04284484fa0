import type { ReactorStats } from './transform-types';

/** What the pool needs of a sandbox; SandboxProcess in production. */
export interface PooledSandbox {
  readonly alive: boolean;
  /** Resolves once the sandbox can take work; rejects when it cannot start. */
  readonly ready: Promise<void>;
  kill(): void;
  exitedOnce(): Promise<void>;
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
}

/** No sandbox for this invocation: the pool (or the tenant's share of it) is full, or closed. */
export class PoolUnavailableError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

interface Waiter<T> {
  tenant: string;
  resolve(sandbox: T): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * A fixed number of sandboxes, each running one invocation at a time, shared fairly between tenants.
 * A tenant holds at most `tenantMaxConcurrency` of them at once; beyond that its invocations wait in
 * its own bounded queue, and a freed sandbox goes to the next tenant in turn (round robin over the
 * tenants that are waiting and under their share), so one tenant's slow or looping transforms
 * cannot keep another tenant's from running. Sandboxes are all started at the first demand and each
 * is replaced as soon as it is discarded (after a timeout, an out-of-memory, a crash).
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
  private replacedCount = 0;
  private refusedCount = 0;
  /** Sandboxes in a row that could not start: a broken environment, not a bad transform. */
  private failedStarts = 0;
  private respawnTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly options: SandboxPoolOptions,
    private readonly create: () => T,
  ) {}

  stats(): Pick<ReactorStats, 'processes' | 'starting' | 'busy' | 'queued' | 'replaced' | 'refused'> {
    return {
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

  acquire(tenant: string): Promise<T> {
    if (this.closed) return Promise.reject(new PoolUnavailableError('The reactor is closed', this.options.retryAfterSeconds));
    if (this.runningOf(tenant) < this.options.tenantMaxConcurrency && this.queues.size === 0) {
      const sandbox = this.idle.pop();
      if (sandbox) {
        this.hold(sandbox, tenant);
        return Promise.resolve(sandbox);
      }
    }
    const queue = this.queues.get(tenant) ?? [];
    if (queue.length >= this.options.tenantMaxQueue || this.waiting >= this.options.maxQueue) {
      this.refusedCount++;
      const whose = queue.length >= this.options.tenantMaxQueue ? "This tenant's transforms" : 'Too many transforms';
      return Promise.reject(new PoolUnavailableError(`${whose} are waiting for a sandbox; try again later`, this.options.retryAfterSeconds));
    }
    const waiting = new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = {
        tenant,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.removeWaiter(waiter);
          this.refusedCount++;
          reject(new PoolUnavailableError('No sandbox became free in time', this.options.retryAfterSeconds));
        }, this.options.queueTimeoutMs),
      };
      queue.push(waiter);
      this.queues.set(tenant, queue);
      this.waiting++;
    });
    this.grow();
    this.dispatch();
    return waiting;
  }

  /** Returns a healthy sandbox after an invocation. */
  release(sandbox: T): void {
    this.unhold(sandbox);
    if (!this.all.has(sandbox)) return;
    if (this.closed || !sandbox.alive) {
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
    if (known) sandbox.kill();
    const replacement = known && !this.closed ? this.replace() : undefined;
    if (replacement && tenant !== undefined) {
      // The hold moves to the replacement: the tenant's running count stays as it is until it is ready.
      this.holders.delete(sandbox);
      this.holders.set(replacement, tenant);
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
  }

  private unhold(sandbox: T): void {
    const tenant = this.holders.get(sandbox);
    if (tenant === undefined) return;
    this.holders.delete(sandbox);
    const left = this.runningOf(tenant) - 1;
    if (left > 0) this.running.set(tenant, left);
    else this.running.delete(tenant);
  }

  /** Hands idle sandboxes to waiting tenants under their share, one tenant after another. */
  private dispatch(): void {
    while (this.idle.length > 0 && this.waiting > 0) {
      let served = false;
      for (const [tenant, queue] of this.queues) {
        if (this.runningOf(tenant) >= this.options.tenantMaxConcurrency) continue;
        const waiter = queue.shift()!;
        this.waiting--;
        // Served: to the back of the line (or out of it).
        this.queues.delete(tenant);
        if (queue.length > 0) this.queues.set(tenant, queue);
        clearTimeout(waiter.timer);
        const sandbox = this.idle.pop()!;
        this.hold(sandbox, tenant);
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
