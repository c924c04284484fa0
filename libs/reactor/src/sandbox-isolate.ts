import ivm from 'isolated-vm';
import type { Invocation } from './invocation';
import type { ReactorStats } from './transform-types';
import { PROXY_ERROR_STATUSES } from './transform-errors';
import { createHostFunction, type ContextBinding, type HostFunctionLimits } from './sandbox-host-functions';
import { SANDBOX_RUNTIME_FILENAME, SANDBOX_RUNTIME_SOURCE } from './sandbox-runtime';
import { compileErrorFrom, TRANSFORM_FILENAME, WRAPPER_LINE_OFFSET, wrapTransformSource } from './transform-source';

export interface SandboxIsolateLimits extends HostFunctionLimits {
  memoryLimitMb: number;
  timeoutMs: number;
  maxResultLength: number;
  maxCachedScripts: number;
  /** Total source length of the cached scripts of one isolate. */
  maxCachedSourceLength: number;
  maxLogLines: number;
  maxLogLineLength: number;
  maxBufferLength: number;
  /** Largest array a builtin may be asked to build in one call (see the runtime's guards). */
  maxElements: number;
  /** Longest string repeat/padStart/padEnd may build. */
  maxStringLength: number;
  /** Most entries a Map or Set may hold. */
  maxCollectionEntries: number;
  /** Budget of a synchronous run on the host's thread (see SandboxIsolate.runSync); 0 never runs one. */
  syncBudgetMs: number;
}

/** A bootstrapped context: fresh (no tenant code has touched it yet) or warm (see SandboxIsolate). */
interface PreparedContext {
  context: ivm.Context;
  binding: ContextBinding;
  /** The runtime's `control(op, a, b)`: 'input', 'deliver', 'check', 'invoke', 'start', 'take', 'wait' or 'ping'. */
  control: ivm.Reference<(op: string, a?: unknown, b?: unknown) => unknown>;
}

/** A context whose last run of one tenant's code ended cleanly, kept to run that code again. */
interface WarmContext {
  prepared: PreparedContext;
  codeHash: string;
  /**
   * Isolate CPU time of its runs, a moving average (a quarter weight to the latest run), in ns: the
   * next run is tried on the host's thread while it is under FAST_RUN_NS. An average rather than the
   * last run alone, so that one garbage collection does not send a cheap transform off the fast path.
   */
  cpuNs: bigint;
}

/** Counters shared by the isolates of one reactor, reported by Reactor.stats(). */
export type SandboxCounters = Pick<ReactorStats, 'contextsCreated' | 'warmInvocations' | 'syncInvocations' | 'syncOverruns'>;

export function newSandboxCounters(): SandboxCounters {
  return { contextsCreated: 0, warmInvocations: 0, syncInvocations: 0, syncOverruns: 0 };
}

/**
 * (tenant, code) pairs whose synchronous runs use too much CPU (over SLOW_SYNC_NS, or stopped at the
 * budget). Each such run is a strike, each cheap synchronous run takes 1/FORGIVE of one away; at
 * STRIKES a pair never runs on the host's thread again in this process. So the odd slow run (a garbage
 * collection, the first runs while V8 compiles the runtime's code) is forgiven, while code that is slow
 * one run in FORGIVE / 2 or more is sent off the host's thread for good: the host's thread spends at most
 * about one budget per FORGIVE runs of a transform on slow runs. Shared by the isolates of one reactor;
 * the oldest pairs are forgotten beyond `max`.
 */
export class SlowRuns {
  static readonly STRIKES = 3;
  static readonly FORGIVE = 32;
  private readonly strikes = new Map<string, number>();

  constructor(private readonly max = 10_000) {}

  has(key: string): boolean {
    return (this.strikes.get(key) ?? 0) >= SlowRuns.STRIKES;
  }

  strike(key: string): void {
    const count = (this.strikes.get(key) ?? 0) + 1;
    this.strikes.delete(key);
    this.strikes.set(key, count);
    if (this.strikes.size > this.max) this.strikes.delete(this.strikes.keys().next().value as string);
  }

  /** A cheap synchronous run. */
  pass(key: string): void {
    const count = this.strikes.get(key);
    if (count === undefined || count >= SlowRuns.STRIKES) return;
    const left = count - 1 / SlowRuns.FORGIVE;
    if (left <= 0) this.strikes.delete(key);
    else this.strikes.set(key, left);
  }
}

/**
 * A warm run is tried synchronously only when the runs of its (tenant, code) took less CPU than this
 * on average (WarmContext.cpuNs); a synchronous run that takes more CPU than SLOW_SYNC_NS is a strike
 * (SlowRuns). CPU time, not wall time: a thread the OS descheduled has not been slow. Measured
 * (isolated-vm 6.2, Node 24, 2-core VM): an asynchronous call costs about 50 µs of CPU in thread
 * hand-offs (two per run, with the readiness ping), a synchronous one 2 µs; for transforms this cheap
 * the hand-off is most of the cost.
 */
const FAST_RUN_NS = 500_000n;
const SLOW_SYNC_NS = 2_000_000n;

/**
 * Below this heap limit no run is synchronous: the budget bounds what a run can allocate on the
 * host's thread (a few MiB in a few ms) only relative to a heap large enough (see runSync).
 */
const SYNC_MIN_MEMORY_MB = 32;

/** The heap is looked at after every run on the isolate's thread, after every fourth synchronous one. */
const SYNC_HEAP_CHECK_EVERY = 4;

/**
 * Warm contexts kept per isolate, least recently used first out. Measured with
 * isolate.getHeapStatistics() (isolated-vm 6.2, Node 24, 16 contexts of distinct tenants): one warm
 * context adds about 230 KiB of used heap for a trivial transform, about 300 KiB for one using
 * require('crypto') (the runtime's globals and closures plus the module's own state), so 16 of them
 * take about 4-5 MiB of the 64 MiB default, under a tenth. A module that keeps much more in its own
 * scope is covered by WARM_HEAP_FRACTION.
 */
const MAX_WARM_CONTEXTS = 16;

/**
 * When, after an invocation, the isolate's used heap exceeds this fraction of its limit, every warm
 * context is released: with the script cache (at most a quarter of the heap too), at least half the
 * heap stays for the transform that runs next, whichever tenant's.
 */
const WARM_HEAP_FRACTION = 0.25;

/** A failure that is the transform's fault and leaves the isolate healthy (its code does not compile). */
export class TransformLoadError extends Error {}

/**
 * One isolate of the pool: its compiled-script cache, the next fresh context and its warm contexts.
 *
 * A context is never shared between tenants. The first invocation of a (tenant, code) pair on an
 * isolate runs in a fresh context, created before it is needed (right after the previous invocation,
 * off the request path). Bootstrapping one costs milliseconds of CPU (the runtime script), so when
 * that run ends cleanly the context is kept, keyed by `${tenantId}\u0000${codeHash}`, and later
 * invocations of the SAME tenant and the SAME code run in it: the module is not evaluated again, its
 * exported handler is called on the new input ('invoke'). This is safe because everything reachable
 * in that context (globals, prototypes, module scope) was put there by the runtime or by that very
 * code of that very tenant: another tenant, or other code of the same tenant, never gets it and
 * still starts from a fresh context. What reuse does share, on purpose, is module-scope state across
 * the requests of one tenant's transform (as a warm serverless function does).
 *
 * What is not shared between runs in a warm context: the host-side Invocation (logs, svc, timers) is
 * per run, as in a fresh context; the runtime resets its per-run state (input, pending svc answers and
 * timers, the log-line count, the fatal-callback promise) before each run. A context is disposed
 * instead of kept when its run threw an error the transform did not throw on purpose, when a timer or
 * microtask callback failed, when the result was refused, on a timeout or an out-of-memory (the whole
 * isolate goes), when its code leaves the script cache, and when the isolate's heap runs high.
 * Compiled scripts are shared across the contexts of an isolate.
 *
 * Where a run executes: first runs, and warm runs of code whose runs are not cheap, on the isolate's
 * own thread (runAsync); warm runs of cheap code on the caller's thread under a short budget
 * (runSync), which spares the two thread hand-offs that otherwise cost more than such a run.
 */
export class SandboxIsolate {
  private readonly isolate: ivm.Isolate;
  private runtime: Promise<ivm.Script> | null = null;
  private readonly scripts = new Map<string, { script: ivm.Script; length: number }>();
  private cachedSourceLength = 0;
  private readonly limitsJson: string;
  private next: Promise<PreparedContext> | null = null;
  private brokenHandler: (() => void) | null = null;
  /** Least recently used first. */
  private readonly warm = new Map<string, WarmContext>();

  /** The last run ended on the host's thread with nothing left queued on the isolate: no ping needed. */
  private idleAfterRun = false;
  /** `next` has resolved: the spare fresh context exists. */
  private spareReady = false;
  private syncRunsSinceHeapCheck = 0;
  /** isolated-vm options of a synchronous run's call, null when this isolate never runs one. */
  private readonly syncCall: { timeout: number } | null;

  constructor(
    private readonly limits: SandboxIsolateLimits,
    onCatastrophicError: (message: string) => void,
    private readonly counters: SandboxCounters,
    private readonly slowRuns: SlowRuns,
  ) {
    this.syncCall = limits.syncBudgetMs > 0 && limits.memoryLimitMb >= SYNC_MIN_MEMORY_MB ? { timeout: limits.syncBudgetMs } : null;
    this.isolate = new ivm.Isolate({
      memoryLimit: limits.memoryLimitMb,
      // With a handler set, isolated-vm parks the isolate's thread instead of aborting the process
      // on a V8 out-of-memory it could not prevent; the invocation it was running never settles.
      onCatastrophicError: (message) => {
        this.dispose();
        const handler = this.brokenHandler;
        this.brokenHandler = null;
        handler?.();
        onCatastrophicError(message);
      },
    });
    this.limitsJson = JSON.stringify({
      timeoutMs: limits.timeoutMs,
      maxResultLength: limits.maxResultLength,
      maxLogLines: limits.maxLogLines,
      maxLogLineLength: limits.maxLogLineLength,
      maxBufferLength: limits.maxBufferLength,
      maxElements: limits.maxElements,
      maxStringLength: limits.maxStringLength,
      maxCollectionEntries: limits.maxCollectionEntries,
      maxDigestInput: limits.maxDigestInput,
      maxRandomBytes: limits.maxRandomBytes,
      proxyErrors: Object.entries(PROXY_ERROR_STATUSES).map(([name, status]) => ({ name, status })),
    });
  }

  get disposed(): boolean {
    return this.isolate.isDisposed;
  }

  get compiledScripts(): number {
    return this.scripts.size;
  }

  get warmContexts(): number {
    return this.warm.size;
  }

  /**
   * The pool's shortcut for prepare(): true when the isolate is ready again without a task on it (the
   * last run ended on the host's thread, leaving nothing queued on the isolate, and the spare fresh
   * context is there); it then also trims the warm contexts.
   */
  readyNow(): boolean {
    if (!this.idleAfterRun || !this.spareReady || this.isolate.isDisposed) return false;
    this.idleAfterRun = false;
    // Every SYNC_HEAP_CHECK_EVERY synchronous runs: what a few cheap runs can add to the heap is small
    // next to the margin WARM_HEAP_FRACTION leaves (see runSync), and the check costs as much as a run.
    if (++this.syncRunsSinceHeapCheck >= SYNC_HEAP_CHECK_EVERY) this.trimWarmContexts();
    return true;
  }

  /**
   * Creates the fresh context the next miss will use (or pings the isolate when it already exists).
   * Being an ordinary task on the isolate, it only completes once anything the previous invocation
   * left running has stopped; the pool bounds it with a timer, so leftover work is charged to this
   * isolate, never to the next tenant. Then drops the warm contexts if the heap runs high.
   */
  async prepare(): Promise<void> {
    // After a run in a warm context the spare fresh context is still there: creating it is then not
    // the task that proves the isolate idle, so queue one that does.
    const spareWasReady = this.next !== null && !this.idleAfterRun;
    this.idleAfterRun = false;
    const prepared = await this.nextContext();
    if (spareWasReady) await prepared.control.apply(undefined, ['ping']);
    this.trimWarmContexts();
  }

  /**
   * Runs one transform, in the warm context of this tenant and code if there is one, else in the
   * fresh context; resolves to the sandbox's JSON outcome. A null tenantId never reuses or keeps a context.
   */
  async execute(invocation: Invocation, tenantId: string | null, code: string, codeHash: string, inputJson: string): Promise<string> {
    try {
      return await this.executeIn(invocation, tenantId, code, codeHash, inputJson);
    } catch (error) {
      // An allocation V8 refused can come out of a call rather than be caught in the sandbox: the isolate
      // hit its memory limit, and goes. Seen after a synchronous attempt stopped at its budget in the
      // middle of an ArrayBuffer bomb: the re-run on the isolate's thread throws that attempt's RangeError
      // (reactor-sync.spec, "memory bomb of array buffers", failed 10 times in 12 without this).
      if (messageMatches(error, /allocation failed|out of memory/i)) this.dispose();
      throw error;
    }
  }

  private async executeIn(invocation: Invocation, tenantId: string | null, code: string, codeHash: string, inputJson: string): Promise<string> {
    this.idleAfterRun = false;
    const key = tenantId === null ? null : `${tenantId}\u0000${codeHash}`;
    const warm = key === null ? undefined : this.warm.get(key);
    // Out of the LRU while it runs: a context that does not end cleanly is never put back.
    if (warm && key !== null) this.forgetWarm(key);
    if (warm && key !== null && this.touchScript(codeHash) !== undefined) {
      this.counters.warmInvocations++;
      if (this.syncCall === null || warm.cpuNs >= FAST_RUN_NS || this.slowRuns.has(key)) {
        return this.runAsync(warm.prepared, null, key, codeHash, invocation, inputJson, warm.cpuNs);
      }
      const outcome = await this.runSync(warm.prepared, key, codeHash, invocation, inputJson, warm.cpuNs, this.syncCall);
      if (outcome !== undefined) return outcome;
      // Stopped at its budget before anything of it left the sandbox: run it again, off the host's thread.
    } else if (warm) {
      this.releaseContext(warm.prepared);
    }
    const prepared = await this.nextContext();
    this.next = null;
    this.spareReady = false;
    return this.runAsync(prepared, code, key, codeHash, invocation, inputJson, null);
  }

  /**
   * A run on the isolate's own thread: the first one of a context (its code loaded from the script
   * cache), or a warm run that may not be tried synchronously.
   */
  private async runAsync(
    prepared: PreparedContext,
    code: string | null,
    key: string | null,
    codeHash: string,
    invocation: Invocation,
    inputJson: string,
    cpuNs: bigint | null,
  ): Promise<string> {
    let outcome: { json: string; reusable: boolean } | undefined;
    const cpuBefore = this.isolate.cpuTime;
    try {
      const script = code === null ? null : await this.scriptFor(prepared, code, codeHash);
      this.bind(prepared, invocation);
      let raw: unknown;
      if (script) {
        // Synchronous on purpose: it only stores a string, and no tenant code has run in the context yet.
        prepared.control.applySync(undefined, ['input', inputJson]);
        raw = await script.run(prepared.context, { promise: true, copy: true });
      } else {
        raw = await prepared.control.apply(undefined, ['invoke', inputJson], { result: { promise: true, copy: true } });
      }
      outcome = outcomeOf(raw);
      return outcome.json;
    } finally {
      // cpuTime counts this isolate's thread only, and only this run was on it. The first run of a
      // context (the module evaluated too) counts as just too slow: the next run is measured again.
      const cpu = this.isolate.isDisposed ? FAST_RUN_NS : this.isolate.cpuTime - cpuBefore;
      this.unbind(prepared, invocation);
      this.settle(prepared, key, codeHash, outcome?.reusable === true, cpuNs === null ? FAST_RUN_NS : average(cpuNs, cpu));
    }
  }

  /**
   * A warm run of a cheap transform, on the host's own thread: no thread hand-off to start it, none to
   * report its outcome, and the isolate is known idle afterwards (no readiness ping). isolated-vm runs
   * a synchronous call, microtasks included, under `timeout`, so the host's thread is blocked for at
   * most syncBudgetMs; a run that goes over it is stopped and answers undefined: the caller runs it
   * again in a fresh context on the isolate's thread, and its (tenant, code) earns a strike (as after
   * any run that used more CPU than SLOW_SYNC_NS; see SlowRuns). Nothing of the stopped attempt has left the sandbox: its
   * svc requests were held (Invocation.holdSvc), its timers and logs are dropped, its context disposed.
   * A run that still awaits svc answers or timers when the call returns goes on on the isolate's thread.
   *
   * Memory: the budget bounds what a run can allocate here to a few MiB, and a warm context only
   * exists while the isolate's heap is under WARM_HEAP_FRACTION of its limit, so a synchronous run
   * cannot bring the heap near its limit (a V8 out-of-memory on this thread would take the process).
   */
  private async runSync(
    prepared: PreparedContext,
    key: string,
    codeHash: string,
    invocation: Invocation,
    inputJson: string,
    cpuNs: bigint,
    syncCall: { timeout: number },
  ): Promise<string | undefined> {
    this.bind(prepared, invocation);
    invocation.holdSvc();
    // isolate.cpuTime counts the thread the isolate runs on, here this one: the run's own CPU time.
    const cpuBefore = this.isolate.cpuTime;
    let raw: unknown;
    try {
      prepared.control.applySync(undefined, ['start', inputJson], syncCall);
      // Only the runtime's own code runs here (the microtasks were drained by the call above): no budget.
      raw = prepared.control.applySync(undefined, ['take'], { result: { copy: true } });
    } catch (error) {
      prepared.binding.invocation = null;
      this.releaseContext(prepared);
      if (this.isolate.isDisposed || !messageMatches(error, /timed out/i)) {
        this.slowRuns.strike(key);
        invocation.end();
        throw error;
      }
      // Over the budget in wall time; a strike only if it was busy for at least half of it.
      if (this.isolate.cpuTime - cpuBefore >= BigInt(syncCall.timeout) * 500_000n) this.slowRuns.strike(key);
      this.counters.syncOverruns++;
      invocation.restart();
      return undefined;
    }
    const cpu = this.isolate.cpuTime - cpuBefore;
    if (cpu > SLOW_SYNC_NS) this.slowRuns.strike(key);
    else this.slowRuns.pass(key);
    this.counters.syncInvocations++;
    invocation.releaseSvc();
    let outcome: { json: string; reusable: boolean } | undefined;
    try {
      if (raw === null) raw = await prepared.control.apply(undefined, ['wait'], { result: { promise: true, copy: true } });
      else this.idleAfterRun = true;
      outcome = outcomeOf(raw);
      return outcome.json;
    } finally {
      this.unbind(prepared, invocation);
      this.settle(prepared, key, codeHash, outcome?.reusable === true, average(cpuNs, cpu));
    }
  }

  private bind(prepared: PreparedContext, invocation: Invocation): void {
    prepared.binding.invocation = invocation;
    invocation.attach((id, payload) => {
      // The sandbox may be gone by then (timeout, disposal): nothing to deliver to.
      try {
        prepared.control.apply(undefined, ['deliver', id, payload]).catch(() => undefined);
      } catch {
        // Released reference: the invocation is over.
      }
    });
  }

  private unbind(prepared: PreparedContext, invocation: Invocation): void {
    prepared.binding.invocation = null;
    invocation.end();
  }

  /** After a run: keeps its context warm for the same tenant and code if it ended cleanly, else disposes of it. */
  private settle(prepared: PreparedContext, key: string | null, codeHash: string, reusable: boolean, cpuNs: bigint): void {
    if (key !== null && reusable && !this.isolate.isDisposed && this.scripts.has(codeHash)) this.keepWarm(key, codeHash, prepared, cpuNs);
    else this.releaseContext(prepared);
  }

  /** Registers what to do if the isolate dies of a catastrophic error during the current invocation. */
  onBroken(handler: (() => void) | null): void {
    this.brokenHandler = handler;
  }

  dispose(): void {
    if (!this.isolate.isDisposed) this.isolate.dispose();
    // Their references died with the isolate: only the bookkeeping is left to drop.
    this.warm.clear();
    this.scripts.clear();
    this.cachedSourceLength = 0;
    this.next = null;
    this.spareReady = false;
    this.runtime = null;
  }

  private nextContext(): Promise<PreparedContext> {
    if (!this.next) {
      const next = this.createContext();
      // A preparation that failed is retried by the next caller rather than remembered.
      next.then(
        () => {
          if (this.next === next) this.spareReady = true;
        },
        () => {
          if (this.next === next) this.next = null;
        },
      );
      this.next = next;
      this.spareReady = false;
    }
    return this.next;
  }

  private async createContext(): Promise<PreparedContext> {
    const context = await this.isolate.createContext();
    try {
      // Compiled off the main thread, once per isolate; every context runs the same script.
      this.runtime ??= this.isolate.compileScript(SANDBOX_RUNTIME_SOURCE, { filename: SANDBOX_RUNTIME_FILENAME });
      const runtime = await this.runtime;
      const install = (await runtime.run(context, { reference: true })) as ivm.Reference;
      const binding: ContextBinding = { invocation: null };
      const host = new ivm.Callback(createHostFunction(binding, this.limits));
      const control = (await install.apply(undefined, [host, this.limitsJson], { result: { reference: true } })) as PreparedContext['control'];
      install.release();
      this.counters.contextsCreated++;
      return { context, binding, control };
    } catch (error) {
      context.release();
      throw error;
    }
  }

  private async scriptFor(prepared: PreparedContext, code: string, codeHash: string): Promise<ivm.Script> {
    const cached = this.touchScript(codeHash);
    if (cached) return cached.script;
    let script: ivm.Script;
    try {
      script = await this.isolate.compileScript(wrapTransformSource(code), {
        filename: TRANSFORM_FILENAME,
        lineOffset: WRAPPER_LINE_OFFSET,
      });
    } catch (error) {
      if (this.isolate.isDisposed) throw error;
      throw new TransformLoadError(`The transform code does not compile: ${compileErrorFrom(error, code).message}`);
    }
    // Code that validate() would have refused (it closes the wrapper early) never runs either.
    const problem = await prepared.control.apply(undefined, ['check', code], { result: { copy: true } });
    if (typeof problem === 'string') {
      script.release();
      throw new TransformLoadError(`The transform code does not compile: ${problem}`);
    }
    this.scripts.set(codeHash, { script, length: code.length });
    this.cachedSourceLength += code.length;
    // Sources and bytecode live in the isolate's own heap: bound them by count and by size, so the
    // cache can never crowd out the transforms themselves.
    while (
      this.scripts.size > 1 &&
      (this.scripts.size > this.limits.maxCachedScripts || this.cachedSourceLength > this.limits.maxCachedSourceLength)
    ) {
      const [oldestHash, oldest] = this.scripts.entries().next().value as [string, { script: ivm.Script; length: number }];
      this.scripts.delete(oldestHash);
      this.cachedSourceLength -= oldest.length;
      oldest.script.release();
      this.releaseWarm((warm) => warm.codeHash === oldestHash);
    }
    return script;
  }

  /** Marks a cached script as just used; re-inserting keeps the Map in least-recently-used order. */
  private touchScript(codeHash: string): { script: ivm.Script; length: number } | undefined {
    const cached = this.scripts.get(codeHash);
    if (cached) {
      this.scripts.delete(codeHash);
      this.scripts.set(codeHash, cached);
    }
    return cached;
  }

  private keepWarm(key: string, codeHash: string, prepared: PreparedContext, cpuNs: bigint): void {
    this.warm.set(key, { prepared, codeHash, cpuNs });
    while (this.warm.size > MAX_WARM_CONTEXTS) {
      const [oldestKey, oldest] = this.warm.entries().next().value as [string, WarmContext];
      this.forgetWarm(oldestKey);
      this.releaseContext(oldest.prepared);
    }
  }

  private forgetWarm(key: string): void {
    this.warm.delete(key);
  }

  private releaseWarm(matches: (warm: WarmContext) => boolean): void {
    for (const [key, warm] of [...this.warm]) {
      if (!matches(warm)) continue;
      this.forgetWarm(key);
      this.releaseContext(warm.prepared);
    }
  }

  /**
   * A module may keep much in its own scope; warm contexts must never leave a transform, of this
   * tenant or another, short of heap. When the used heap runs high they are all released (the next
   * garbage collection reclaims them); the next runs of their code start from fresh contexts again.
   */
  private trimWarmContexts(): void {
    this.syncRunsSinceHeapCheck = 0;
    if (this.warm.size === 0 || this.isolate.isDisposed) return;
    // Synchronous on purpose (an async call costs a thread hop per invocation): prepare() only calls
    // it once its own task on the isolate has completed, i.e. when the isolate is idle.
    const heap = this.isolate.getHeapStatisticsSync();
    if (heap.used_heap_size > this.limits.memoryLimitMb * 1024 * 1024 * WARM_HEAP_FRACTION) this.releaseWarm(() => true);
  }

  private releaseContext(prepared: PreparedContext): void {
    if (this.isolate.isDisposed) return;
    prepared.control.release();
    prepared.context.release();
  }
}

function average(previous: bigint, latest: bigint): bigint {
  return (previous * 3n + latest) / 4n;
}

/** The runtime prefixes its outcome with '1' (the context may run this code again) or '0'. */
function outcomeOf(raw: unknown): { json: string; reusable: boolean } {
  if (typeof raw !== 'string') throw new TransformLoadError('The transform did not produce a result');
  const flag = raw.charAt(0);
  if (flag !== '0' && flag !== '1') return { json: raw, reusable: false };
  return { json: raw.slice(1), reusable: flag === '1' };
}

/** Whether an error isolated-vm threw says this (`timed out`: a call stopped at its `timeout`). */
function messageMatches(error: unknown, pattern: RegExp): boolean {
  // Not instanceof: isolated-vm may build its errors in another realm (Jest runs code in a vm context).
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && pattern.test(message);
}
