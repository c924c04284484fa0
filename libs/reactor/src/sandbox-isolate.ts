import ivm from 'isolated-vm';
import type { Invocation } from './invocation';
import { createHostFunction, HASHES, type ContextBinding } from './sandbox-host-functions';
import { newCounters, type SandboxCounters, type SandboxProcessSettings } from './sandbox-protocol';
import { X509_FIELDS } from './sandbox-crypto-exchange';
import { SANDBOX_RUNTIME_FILENAME, SANDBOX_RUNTIME_SOURCE } from './sandbox-runtime';
import { bundledModules, ModuleScripts } from './sandbox-modules';
import { ResidentPeak } from './resident-peak';
import { ScriptCache } from './script-cache';
import { PROXY_ERROR_MESSAGES, PROXY_ERROR_STATUSES, type ProxyErrorName } from './transform-contract';
import { compileErrorFrom, TRANSFORM_FILENAME, WRAPPER_LINE_OFFSET, wrapTransformSource } from './transform-source';
import { WARM_HEAP_FRACTION, WarmContexts, type PreparedContext } from './warm-contexts';

/**
 * What a run may add to the sandbox process's resident set besides its heap and buffers: the result's
 * JSON, native crypto and zlib working memory. Measured over the reactor's suites, a legitimate run at
 * the 64 MiB default grows the process by at most about 105 MiB (openpgp's first encryption, zlib at
 * its output bound), under the 160 MiB this allows; a 256 MiB flattened string is far over. Native work
 * does not shrink with a smaller heap limit, so the allowance never falls under RESIDENT_FLOOR.
 */
const RESIDENT_SLACK = 32 * 1024 * 1024;
const RESIDENT_FLOOR = 128 * 1024 * 1024;

/** A failure that is the transform's fault and leaves the isolate healthy (its code does not compile). */
export class TransformLoadError extends Error {}

/** A run took the isolate's heap past its limit (see checkHeap). */
export class MemoryLimitError extends Error {}

/** The code of this hash is not cached here and was not sent: the API process sends it again. */
export class MissingCodeError extends Error {}

/**
 * The one isolate of a sandbox process: its compiled-script cache, the next fresh context and its
 * warm contexts. Everything runs on the sandbox process's main thread, synchronously under
 * isolated-vm's timeout where it can (no thread hand-off); the API process stops the whole process
 * when the timeout is not enough (a long builtin call, a run awaiting something).
 *
 * A context is never shared between tenants. The first invocation of a (tenant, code) pair runs in
 * a fresh context, created before it is needed (right after the previous invocation was answered).
 * When that run ends cleanly the context is kept (WarmContexts) and later invocations of the SAME
 * tenant and the SAME code run in it: the module is not evaluated again, its exported handler is
 * called on the new input. Everything reachable in that context was put there by the runtime or by
 * that very code of that very tenant; what reuse shares, on purpose, is module-scope state across the
 * requests of one tenant's transform (as a warm serverless function does). A context is disposed
 * instead of kept when its run threw an error the transform did not throw on purpose, when a timer
 * or microtask callback failed, when the result was refused, when its code leaves the script cache,
 * and when the isolate's heap runs high.
 */
export class SandboxIsolate {
  private readonly isolate: ivm.Isolate;
  private readonly runtime: ivm.Script;
  private readonly limitsJson: string;
  private readonly scripts: ScriptCache;
  private readonly warm: WarmContexts;
  private readonly modules: ModuleScripts;
  private spare: PreparedContext | null = null;
  /** Used heap after the last run, in bytes. */
  private usedHeap = 0;
  private readonly residentPeak = new ResidentPeak();
  readonly counters: SandboxCounters = newCounters();

  constructor(
    private readonly settings: SandboxProcessSettings,
    onCatastrophicError: (message: string) => void,
  ) {
    // With a handler set, isolated-vm parks the isolate's thread instead of aborting the process on
    // a V8 out-of-memory it could not prevent; the handler then has this whole process replaced.
    this.isolate = new ivm.Isolate({ memoryLimit: settings.memoryLimitMb, onCatastrophicError });
    this.runtime = this.isolate.compileScriptSync(SANDBOX_RUNTIME_SOURCE, { filename: SANDBOX_RUNTIME_FILENAME });
    this.modules = new ModuleScripts(this.isolate, settings.maxCachedSourceLength);
    this.warm = new WarmContexts((prepared) => this.releaseContext(prepared));
    this.scripts = new ScriptCache(settings.maxCachedScripts, settings.maxCachedSourceLength, (codeHash) =>
      this.warm.releaseWhere((hash) => hash === codeHash),
    );
    this.limitsJson = JSON.stringify({
      timeoutMs: settings.timeoutMs,
      maxResultLength: settings.maxResultLength,
      maxLogLines: settings.maxLogLines,
      maxLogLineLength: settings.maxLogLineLength,
      maxBufferLength: settings.maxBufferLength,
      maxElements: settings.maxElements,
      maxStringLength: settings.maxStringLength,
      maxCollectionEntries: settings.maxCollectionEntries,
      maxDigestInput: settings.maxDigestInput,
      maxRandomBytes: settings.maxRandomBytes,
      proxyErrors: Object.entries(PROXY_ERROR_STATUSES).map(([name, status]) => ({ name, status, message: PROXY_ERROR_MESSAGES[name as ProxyErrorName] })),
      modules: Object.keys(bundledModules()),
      nodeVersion: process.version,
      hashes: [...HASHES],
      x509Fields: [...X509_FIELDS],
    });
  }

  get disposed(): boolean {
    return this.isolate.isDisposed;
  }

  /**
   * After an answer: the spare fresh context for the next first run, and no warm contexts if the heap
   * runs high. True when that changed the counters.
   */
  prepare(): boolean {
    if (this.isolate.isDisposed) return false;
    const before = this.counters.contextsCreated + this.counters.warmContexts * 1e6;
    this.spare ??= this.createContext();
    // The heap as the last run left it (checkHeap): one reading per run is enough.
    if (this.warm.size > 0 && this.usedHeap > this.settings.memoryLimitMb * 1024 * 1024 * WARM_HEAP_FRACTION) this.warm.releaseWhere(() => true);
    this.updateCounters();
    return this.counters.contextsCreated + this.counters.warmContexts * 1e6 !== before;
  }

  /**
   * Runs one transform, in the warm context of this tenant and code if there is one, else in a fresh
   * context; resolves to the sandbox's JSON outcome. A null tenantId never reuses or keeps a context.
   */
  async execute(
    invocation: Invocation,
    tenantId: string | null,
    code: string | null,
    codeHash: string,
    inputJson: string,
    body: string,
    timeoutMs: number,
  ): Promise<string> {
    const key = tenantId === null ? null : `${tenantId}\u0000${codeHash}`;
    const warm = key === null ? undefined : this.warm.take(key);
    const timeout = { timeout: Math.max(1, Math.ceil(timeoutMs)) };
    this.residentPeak.start();
    let prepared: PreparedContext;
    if (warm && this.scripts.touch(codeHash)) {
      prepared = warm.prepared;
      this.counters.warmInvocations++;
      this.bind(prepared, invocation);
      prepared.control.applySync(undefined, ['start', inputJson, body], timeout);
    } else {
      if (warm) this.releaseContext(warm.prepared);
      prepared = this.spare ?? this.createContext();
      this.spare = null;
      let script: ivm.Script;
      try {
        script = this.scriptFor(prepared, code, codeHash);
      } catch (error) {
        this.releaseContext(prepared);
        throw error;
      }
      this.bind(prepared, invocation);
      prepared.control.applySync(undefined, ['input', inputJson, body]);
      script.runSync(prepared.context, timeout);
    }
    let outcome: { json: string; reusable: boolean } | undefined;
    try {
      let raw = prepared.control.applySync(undefined, ['take'], { result: { copy: true } });
      // Still awaiting svc answers or timers: the rest runs on isolated-vm's thread, this one stays free
      // to deliver them; the API process's deadline bounds it.
      if (raw === null) raw = await prepared.control.apply(undefined, ['wait'], { result: { promise: true, copy: true } });
      this.checkHeap(prepared.control);
      outcome = outcomeOf(raw);
      return outcome.json;
    } finally {
      prepared.binding.invocation = null;
      invocation.end();
      if (key !== null && outcome?.reusable === true && !this.isolate.isDisposed && this.scripts.has(codeHash)) {
        this.warm.keep(key, codeHash, prepared);
      } else {
        this.releaseContext(prepared);
      }
      this.updateCounters();
    }
  }

  /**
   * V8 enforces the heap limit between JavaScript steps only: one builtin call (flattening a rope of
   * hundreds of millions of characters, say) can take the heap past it and return, and the garbage
   * collector may free that string before the run ends. Such a run is over its limit all the same: it
   * answers as an out-of-memory, and its process is replaced. Two readings catch it:
   * - the heap and the array buffers the run left, judged as isolated-vm judges them: a reading over the
   *   limit counts only if a full collection does not bring it back under (the young generation and
   *   garbage not yet collected are not the run's; judged on them, a run that ended with a full heap of
   *   cached scripts answered out of memory now and then), or if the heap is past V8's own ceiling
   *   (heap_size_limit: the limit and the young generation), where only one builtin's allocation can put it;
   * - the process's resident-set peak during the run (which no collection lowers) grown by more than
   *   twice the limit and RESIDENT_SLACK (the heap's pages and the buffers, each up to the limit, and what
   *   the process itself adds: a collection that compacts, a context made), and never less than
   *   RESIDENT_FLOOR; read before the host's own collection. Bundled packages compile outside that reading (loadModule).
   */
  private checkHeap(control: PreparedContext['control']): void {
    const limit = this.settings.memoryLimitMb * 1024 * 1024;
    // Read before the collection below, whose own pages are the host's work, not the run's.
    const grown = this.residentPeak.grown();
    const reading = () => {
      const heap = this.isolate.getHeapStatisticsSync();
      this.usedHeap = heap.used_heap_size;
      return heap;
    };
    const heap = reading();
    if (heap.used_heap_size + heap.externally_allocated_size > limit) {
      // Past V8's own ceiling, only a builtin's one allocation can have put it there: no collection excuses that.
      const collected = heap.used_heap_size <= heap.heap_size_limit && control.applySync(undefined, ['collect']) === true;
      const after = collected ? reading() : heap;
      if (!collected || after.used_heap_size + after.externally_allocated_size > limit) {
        throw new MemoryLimitError('The transform went over its memory limit');
      }
    }
    if (grown !== null && grown > Math.max(2 * limit + RESIDENT_SLACK, RESIDENT_FLOOR)) {
      throw new MemoryLimitError('The transform went over its memory limit');
    }
  }

  /** The code cache of a bundled module this isolate compiled and ran (the build's producer: ModuleScripts.produceCodeCache). */
  moduleCodeCache(name: string): ArrayBuffer | null {
    return this.modules.produceCodeCache(name);
  }

  dispose(): void {
    if (!this.isolate.isDisposed) this.isolate.dispose();
    this.residentPeak.close();
    this.warm.clear();
    this.scripts.clear();
    this.modules.clear();
    this.spare = null;
  }

  private bind(prepared: PreparedContext, invocation: Invocation): void {
    prepared.binding.invocation = invocation;
    // Ciphers a previous run of a warm context left open end with it.
    prepared.binding.crypto = undefined;
    invocation.attach((id, payload, bytes) => {
      // The sandbox may be gone by then (disposal): nothing to deliver to.
      try {
        const copied = bytes === undefined ? undefined : new ivm.ExternalCopy(bytes).copyInto({ release: true });
        prepared.control.apply(undefined, ['deliver', id, payload, copied]).catch(() => undefined);
      } catch {
        // Released reference: the invocation is over.
      }
    });
  }

  private createContext(): PreparedContext {
    const context = this.isolate.createContextSync();
    try {
      const install = this.runtime.runSync(context, { reference: true }) as ivm.Reference;
      const binding: ContextBinding = { invocation: null, loadModule: (name) => this.loadModule(name, context) };
      const host = new ivm.Callback(createHostFunction(binding, this.settings));
      const control = install.applySync(undefined, [host, this.limitsJson], { result: { reference: true } }) as PreparedContext['control'];
      install.release();
      this.counters.contextsCreated++;
      return { context, binding, control };
    } catch (error) {
      context.release();
      throw error;
    }
  }

  /** A bundled package's first require in a context: the runtime's work, outside the run's peak. */
  private loadModule(name: string, context: ivm.Context): string | null {
    this.residentPeak.pause();
    try {
      return this.modules.run(name, context);
    } finally {
      this.residentPeak.resume();
    }
  }

  private scriptFor(prepared: PreparedContext, code: string | null, codeHash: string): ivm.Script {
    const cached = this.scripts.touch(codeHash);
    if (cached) return cached;
    if (code === null) throw new MissingCodeError(codeHash);
    let script: ivm.Script;
    try {
      script = this.isolate.compileScriptSync(wrapTransformSource(code), { filename: TRANSFORM_FILENAME, lineOffset: WRAPPER_LINE_OFFSET });
    } catch (error) {
      if (this.isolate.isDisposed) throw error;
      throw new TransformLoadError(`The transform code does not compile: ${compileErrorFrom(error, code).message}`);
    }
    // Code that validate() would have refused (it closes the wrapper early) never runs either.
    const problem = prepared.control.applySync(undefined, ['check', code], { result: { copy: true } });
    if (typeof problem === 'string') {
      script.release();
      throw new TransformLoadError(`The transform code does not compile: ${problem}`);
    }
    this.scripts.add(codeHash, script, code.length);
    return script;
  }

  private releaseContext(prepared: PreparedContext): void {
    if (this.isolate.isDisposed) return;
    prepared.control.release();
    prepared.context.release();
  }

  private updateCounters(): void {
    this.counters.compiledScripts = this.scripts.size;
    this.counters.warmContexts = this.warm.size;
    this.counters.modulesCompiled = this.modules.counts.compiled;
    this.counters.modulesFromCodeCache = this.modules.counts.fromCodeCache;
    this.counters.modulesCodeCacheRejected = this.modules.counts.codeCacheRejected;
  }
}

/** The runtime prefixes its outcome with '1' (the context may run this code again) or '0'. */
function outcomeOf(raw: unknown): { json: string; reusable: boolean } {
  if (typeof raw !== 'string') throw new TransformLoadError('The transform did not produce a result');
  const flag = raw.charAt(0);
  if (flag !== '0' && flag !== '1') return { json: raw, reusable: false };
  return { json: raw.slice(1), reusable: flag === '1' };
}
