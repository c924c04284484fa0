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
}

/** A bootstrapped context that no tenant code has touched yet. */
interface PreparedContext {
  context: ivm.Context;
  binding: ContextBinding;
  /** The runtime's `control(op, a, b)`: 'input', 'deliver' or 'check'. */
  control: ivm.Reference<(op: string, a?: unknown, b?: unknown) => unknown>;
}

/** A failure that is the transform's fault and leaves the isolate healthy (its code does not compile). */
export class TransformLoadError extends Error {}

/**
 * One isolate of the pool: its compiled-script cache and the next fresh context.
 *
 * Every invocation runs in a context of its own, created before it is needed (right after the
 * previous invocation, off the request path) and thrown away after: globals, prototypes and
 * closures a transform leaves behind die with it, so no tenant ever sees another's state, and no
 * request of a tenant sees another request's. Contexts are cheap (about half a millisecond, measured);
 * compiled scripts, which are not, are shared across the contexts of an isolate.
 */
export class SandboxIsolate {
  private readonly isolate: ivm.Isolate;
  private runtime: Promise<ivm.Script> | null = null;
  private readonly scripts = new Map<string, { script: ivm.Script; length: number }>();
  private cachedSourceLength = 0;
  private readonly limitsJson: string;
  private next: Promise<PreparedContext> | null = null;
  private brokenHandler: (() => void) | null = null;

  constructor(
    private readonly limits: SandboxIsolateLimits,
    onCatastrophicError: (message: string) => void,
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

  /**
   * Creates the context the next invocation will use. Being an ordinary task on the isolate, it only
   * completes once anything the previous invocation left running has stopped; the pool bounds it
   * with a timer, so leftover work is charged to this isolate, never to the next tenant.
   */
  prepare(): Promise<void> {
    return this.nextContext().then(() => undefined);
  }

  /** Runs one transform in a fresh context; resolves to the sandbox's JSON outcome. */
  async execute(invocation: Invocation, code: string, codeHash: string, inputJson: string): Promise<string> {
    const prepared = await this.nextContext();
    this.next = null;
    try {
      const script = await this.scriptFor(prepared, code, codeHash);
      prepared.binding.invocation = invocation;
      invocation.attach((id, payload) => {
        // The sandbox may be gone by then (timeout, disposal): nothing to deliver to.
        try {
          prepared.control.apply(undefined, ['deliver', id, payload]).catch(() => undefined);
        } catch {
          // Released reference: the invocation is over.
        }
      });
      // Synchronous on purpose: it only stores a string, and no tenant code has run in the context yet.
      prepared.control.applySync(undefined, ['input', inputJson]);
      const outcome = await script.run(prepared.context, { promise: true, copy: true });
      if (typeof outcome !== 'string') throw new TransformLoadError('The transform did not produce a result');
      return outcome;
    } finally {
      prepared.binding.invocation = null;
      invocation.end();
      this.releaseContext(prepared);
    }
  }

  /** Registers what to do if the isolate dies of a catastrophic error during the current invocation. */
  onBroken(handler: (() => void) | null): void {
    this.brokenHandler = handler;
  }

  dispose(): void {
    if (!this.isolate.isDisposed) this.isolate.dispose();
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
      return { context, binding, control };
    } catch (error) {
      context.release();
      throw error;
    }
  }

  private async scriptFor(prepared: PreparedContext, code: string, codeHash: string): Promise<ivm.Script> {
    const cached = this.scripts.get(codeHash);
    if (cached) {
      // Re-inserting keeps the Map in least-recently-used order for eviction.
      this.scripts.delete(codeHash);
      this.scripts.set(codeHash, cached);
      return cached.script;
    }
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
    }
    return script;
  }

  private releaseContext(prepared: PreparedContext): void {
    if (this.isolate.isDisposed) return;
    prepared.control.release();
    prepared.context.release();
  }
}
