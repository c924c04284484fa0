import ivm from 'isolated-vm';
import type { Invocation } from './invocation';
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
}

/** A bootstrapped context: fresh (no tenant code has touched it yet) or warm (see SandboxIsolate). */
interface PreparedContext {
  context: ivm.Context;
  binding: ContextBinding;
  /** The runtime's `control(op, a, b)`: 'input', 'deliver', 'check', 'invoke' or 'ping'. */
  control: ivm.Reference<(op: string, a?: unknown, b?: unknown) => unknown>;
}

/** A context whose last run of one tenant's code ended cleanly, kept to run that code again. */
interface WarmContext {
  prepared: PreparedContext;
  codeHash: string;
}

/** Counters shared by the isolates of one reactor, reported by Reactor.stats(). */
export interface SandboxCounters {
  /** Contexts bootstrapped (runtime script run in a new context) since the reactor started. */
  contextsCreated: number;
  /** Warm contexts currently kept, over all live isolates. */
  warmContexts: number;
  /** Invocations that ran in a warm context instead of a fresh one. */
  warmInvocations: number;
}

/**
 * Warm contexts kept per isolate, least recently used first out. Measured with
 * isolate.getHeapStatistics() (isolated-vm 6.2, Node 24, 16 contexts of distinct tenants): one warm
 * context adds about 230 KiB of used heap for a trivial transform, about 300 KiB for one using
 * require('crypto') (the runtime's globals and closures plus the module's own state), so 16 of them
 * take about 4-5 MiB of the 64 MiB default, under a tenth. A module that keeps much more in its own
 * scope is covered by WARM_HEAP_FRACTION.
 */
export const MAX_WARM_CONTEXTS = 16;

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

  constructor(
    private readonly limits: SandboxIsolateLimits,
    onCatastrophicError: (message: string) => void,
    private readonly counters: SandboxCounters = { contextsCreated: 0, warmContexts: 0, warmInvocations: 0 },
  ) {
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
   * Creates the fresh context the next miss will use (or pings the isolate when it already exists).
   * Being an ordinary task on the isolate, it only completes once anything the previous invocation
   * left running has stopped; the pool bounds it with a timer, so leftover work is charged to this
   * isolate, never to the next tenant. Then drops the warm contexts if the heap runs high.
   */
  async prepare(): Promise<void> {
    // After a run in a warm context the spare fresh context is still there: creating it is then not
    // the task that proves the isolate idle, so queue one that does.
    const spareWasReady = this.next !== null;
    const prepared = await this.nextContext();
    if (spareWasReady) await prepared.control.apply(undefined, ['ping']);
    this.trimWarmContexts();
  }

  /**
   * Runs one transform, in the warm context of this tenant and code if there is one, else in the
   * fresh context; resolves to the sandbox's JSON outcome. A null tenantId never reuses or keeps a context.
   */
  async execute(invocation: Invocation, tenantId: string | null, code: string, codeHash: string, inputJson: string): Promise<string> {
    const key = tenantId === null ? null : `${tenantId}\u0000${codeHash}`;
    const warm = key === null ? undefined : this.warm.get(key);
    // Out of the LRU while it runs: a context that does not end cleanly is never put back.
    if (warm && key !== null) this.forgetWarm(key);
    const hit = warm !== undefined && this.touchScript(codeHash) !== undefined;
    let prepared: PreparedContext;
    if (hit) {
      this.counters.warmInvocations++;
      prepared = warm.prepared;
    } else {
      if (warm) this.releaseContext(warm.prepared);
      prepared = await this.nextContext();
      this.next = null;
    }
    let reusable = false;
    try {
      const script = hit ? null : await this.scriptFor(prepared, code, codeHash);
      prepared.binding.invocation = invocation;
      invocation.attach((id, payload) => {
        // The sandbox may be gone by then (timeout, disposal): nothing to deliver to.
        try {
          prepared.control.apply(undefined, ['deliver', id, payload]).catch(() => undefined);
        } catch {
          // Released reference: the invocation is over.
        }
      });
      let raw: unknown;
      if (script) {
        // Synchronous on purpose: it only stores a string, and no tenant code has run in the context yet.
        prepared.control.applySync(undefined, ['input', inputJson]);
        raw = await script.run(prepared.context, { promise: true, copy: true });
      } else {
        raw = await prepared.control.apply(undefined, ['invoke', inputJson], { result: { promise: true, copy: true } });
      }
      if (typeof raw !== 'string') throw new TransformLoadError('The transform did not produce a result');
      // The runtime prefixes its outcome with '1' (the context may run this code again) or '0'.
      const flag = raw.charAt(0);
      if (flag !== '0' && flag !== '1') return raw;
      reusable = flag === '1';
      return raw.slice(1);
    } finally {
      prepared.binding.invocation = null;
      invocation.end();
      if (key !== null && reusable && !this.isolate.isDisposed && this.scripts.has(codeHash)) this.keepWarm(key, codeHash, prepared);
      else this.releaseContext(prepared);
    }
  }

  /** Registers what to do if the isolate dies of a catastrophic error during the current invocation. */
  onBroken(handler: (() => void) | null): void {
    this.brokenHandler = handler;
  }

  dispose(): void {
    if (!this.isolate.isDisposed) this.isolate.dispose();
    // Their references died with the isolate: only the bookkeeping is left to drop.
    this.counters.warmContexts -= this.warm.size;
    this.warm.clear();
    this.scripts.clear();
    this.cachedSourceLength = 0;
    this.next = null;
    this.runtime = null;
  }

  private nextContext(): Promise<PreparedContext> {
    if (!this.next) {
      const next = this.createContext();
      // A preparation that failed is retried by the next caller rather than remembered.
      next.catch(() => {
        if (this.next === next) this.next = null;
      });
      this.next = next;
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

  private keepWarm(key: string, codeHash: string, prepared: PreparedContext): void {
    this.warm.set(key, { prepared, codeHash });
    this.counters.warmContexts++;
    while (this.warm.size > MAX_WARM_CONTEXTS) {
      const [oldestKey, oldest] = this.warm.entries().next().value as [string, WarmContext];
      this.forgetWarm(oldestKey);
      this.releaseContext(oldest.prepared);
    }
  }

  private forgetWarm(key: string): void {
    if (this.warm.delete(key)) this.counters.warmContexts--;
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
