import type { ReactorStats } from './transform-types';
/** What the pool needs of an isolate; SandboxIsolate in production. */
export interface PooledIsolate {
  readonly disposed: boolean;
  readonly compiledScripts: number;
  readonly warmContexts: number;
  /** Readies the isolate for its next invocation; completes only once the isolate is idle. */
  prepare(): Promise<void>;
  /** True when the isolate is known ready without prepare() (nothing of the last invocation can be left on it). */
  readyNow?(): boolean;
  dispose(): void;
}

export interface IsolatePoolOptions {
  size: number;
  maxQueue: number;
  queueTimeoutMs: number;
  /** Longest an isolate may take to become ready again after an invocation before it is replaced. */
  prepareTimeoutMs: number;
}

/** No isolate became free in time, or too many invocations are already waiting. */
export class PoolUnavailableError extends Error {}

interface Waiter {
  resolve(isolate: PooledIsolate): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * A fixed number of isolates, each running one invocation at a time: an isolate that has to be
 * killed (timeout, out of memory) then takes down no one else's invocation. Isolates are created
 * on demand up to the size and replaced as soon as one is discarded; callers beyond the size wait
 * in a bounded FIFO queue.
 */
export class IsolatePool<T extends PooledIsolate> {
  private readonly all = new Set<T>();
  private readonly idle: T[] = [];
  private readonly waiters: Waiter[] = [];
  private replacedCount = 0;
  /** Isolates in a row that could not get ready: a broken environment, not a bad transform. */
  private failedStarts = 0;
  private readonly started = new WeakSet<T>();
  private respawnTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private drained: (() => void) | null = null;

  constructor(
    private readonly options: IsolatePoolOptions,
    private readonly create: () => T,
  ) {}

  stats(): Pick<ReactorStats, 'isolates' | 'compiledScripts' | 'warmContexts' | 'busy' | 'queued' | 'replaced'> {
    let compiledScripts = 0;
    let warmContexts = 0;
    for (const isolate of this.all) {
      compiledScripts += isolate.compiledScripts;
      warmContexts += isolate.warmContexts;
    }
    return {
      isolates: this.all.size,
      compiledScripts,
      warmContexts,
      busy: this.all.size - this.idle.length,
      queued: this.waiters.length,
      replaced: this.replacedCount,
    };
  }

  acquire(): Promise<T> {
    if (this.closed) return Promise.reject(new PoolUnavailableError('The reactor is closed'));
    // Most recently used first: its caches and heap are warm.
    const isolate = this.idle.pop();
    if (isolate) return Promise.resolve(isolate);
    const canGrow = this.all.size < this.options.size;
    if (!canGrow && this.waiters.length >= this.options.maxQueue) {
      return Promise.reject(new PoolUnavailableError('Too many transforms are waiting for a sandbox'));
    }
    const waiting = new Promise<T>((resolve, reject) => {
      const waiter: Waiter = {
        resolve: resolve as (isolate: PooledIsolate) => void,
        reject,
        timer: setTimeout(() => {
          const index = this.waiters.indexOf(waiter);
          if (index !== -1) this.waiters.splice(index, 1);
          reject(new PoolUnavailableError('No sandbox became free in time'));
        }, this.options.queueTimeoutMs),
      };
      this.waiters.push(waiter);
    });
    if (canGrow) this.spawn();
    return waiting;
  }

  /** Returns a healthy isolate after an invocation, once it is ready (and idle) again. */
  release(isolate: T): void {
    if (!this.all.has(isolate)) return;
    if (this.closed || isolate.disposed) {
      this.discard(isolate);
      return;
    }
    if (this.started.has(isolate) && isolate.readyNow?.()) {
      this.failedStarts = 0;
      this.makeAvailable(isolate);
      return;
    }
    // A new isolate that cannot get ready says something about the environment; one that served
    // before and is slow to settle says something about its last transform.
    const fresh = !this.started.has(isolate);
    const failed = () => {
      if (fresh) this.failedStarts++;
      this.discard(isolate);
    };
    const timer = setTimeout(failed, this.options.prepareTimeoutMs);
    isolate.prepare().then(
      () => {
        clearTimeout(timer);
        this.started.add(isolate);
        this.failedStarts = 0;
        if (this.all.has(isolate) && !isolate.disposed && !this.closed) this.makeAvailable(isolate);
        else this.discard(isolate);
      },
      () => {
        clearTimeout(timer);
        failed();
      },
    );
  }

  /** Disposes an isolate (timed out, out of memory, broken) and starts its replacement. */
  discard(isolate: T): void {
    if (!this.all.delete(isolate)) return;
    const index = this.idle.indexOf(isolate);
    if (index !== -1) this.idle.splice(index, 1);
    isolate.dispose();
    if (this.closed) {
      this.checkDrained();
      return;
    }
    this.replacedCount++;
    if (this.failedStarts === 0) {
      this.spawn();
    } else if (!this.respawnTimer) {
      // Something keeps isolates from starting: retry with backoff instead of spinning.
      const delay = Math.min(30_000, 100 * 2 ** Math.min(this.failedStarts, 9));
      this.respawnTimer = setTimeout(() => {
        this.respawnTimer = null;
        if (!this.closed && this.all.size < this.options.size) this.spawn();
      }, delay);
      this.respawnTimer.unref();
    }
  }

  /** Stops accepting work, fails waiting callers, and resolves once every isolate is disposed. */
  close(): Promise<void> {
    this.closed = true;
    if (this.respawnTimer) clearTimeout(this.respawnTimer);
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(new PoolUnavailableError('The reactor is closed'));
    }
    for (const isolate of this.idle.splice(0)) {
      this.all.delete(isolate);
      isolate.dispose();
    }
    // Busy isolates finish their invocation (bounded by its timeout) and are disposed on release.
    return new Promise<void>((resolve) => {
      this.drained = resolve;
      this.checkDrained();
    });
  }

  private spawn(): void {
    let isolate: T;
    try {
      isolate = this.create();
    } catch {
      // Waiters time out with a 503 rather than hang; the next acquire tries again.
      return;
    }
    this.all.add(isolate);
    // Ready (its first context prepared) before anyone gets it.
    this.release(isolate);
  }

  private makeAvailable(isolate: T): void {
    const waiter = this.waiters.shift();
    if (waiter) {
      clearTimeout(waiter.timer);
      waiter.resolve(isolate);
    } else {
      this.idle.push(isolate);
    }
  }

  private checkDrained(): void {
    if (this.drained && this.all.size === 0) {
      const done = this.drained;
      this.drained = null;
      done();
    }
  }
}
