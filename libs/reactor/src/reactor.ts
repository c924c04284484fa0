import { availableParallelism } from 'node:os';
import { Invocation, type InvocationLimits } from './invocation';
import { IsolatePool, PoolUnavailableError } from './isolate-pool';
import {
  newSandboxCounters,
  SandboxIsolate,
  SlowRuns,
  TransformLoadError,
  type SandboxCounters,
  type SandboxIsolateLimits,
} from './sandbox-isolate';
import { proxyErrorResult } from './transform-errors';
import { transformCodeHash } from './transform-source';
import type { ReactorOptions, ReactorStats, TransformInput, TransformResult } from './transform-types';
import { TransformValidator } from './transform-validator';

export const REACTOR_DEFAULTS = {
  timeoutMs: 5000,
  memoryLimitMb: 64,
  maxCodeLength: 50_000,
  maxQueue: 1000,
  queueTimeoutMs: 30_000,
  maxResultLength: 10 * 1024 * 1024,
  maxCachedScripts: 500,
  maxSvcRequests: 100,
  maxLogLines: 100,
  maxLogLineLength: 2000,
  maxTimers: 1000,
  maxDigestInput: 32 * 1024 * 1024,
  maxRandomBytes: 64 * 1024,
  maxBufferLength: 256 * 1024 * 1024,
  syncBudgetMs: 5,
} as const;

type Settled = { kind: 'done'; outcome: string } | { kind: 'timeout' } | { kind: 'broken' } | { kind: 'failed'; error: unknown };

// RFC 9110 token for names; values may not smuggle a second header or a NUL.
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE_FORBIDDEN = /[\r\n\0]/;

/**
 * Runs tenant-written transforms in isolated-vm sandboxes. `run` never rejects: every failure
 * (the tenant's, a timeout, an exhausted pool) is a TransformResult with an error status.
 */
export class Reactor {
  private readonly timeoutMs: number;
  private readonly maxCodeLength: number;
  private readonly maxResultLength: number;
  private readonly invocationLimits: InvocationLimits;
  private readonly pool: IsolatePool<SandboxIsolate>;
  private readonly validator: TransformValidator;
  private closed = false;
  private catastrophicErrors = 0;
  private readonly sandboxCounters: SandboxCounters = newSandboxCounters();
  private readonly slowRuns = new SlowRuns();
  private readonly codeHashes = new CodeHashes();
  /** Executions abandoned at their deadline that have not stopped yet (see close()). */
  private readonly abandoned = new Set<Promise<unknown>>();

  constructor(options: ReactorOptions = {}) {
    this.timeoutMs = positive(options.timeoutMs, REACTOR_DEFAULTS.timeoutMs);
    this.maxCodeLength = positive(options.maxCodeLength, REACTOR_DEFAULTS.maxCodeLength);
    this.maxResultLength = positive(options.maxResultLength, REACTOR_DEFAULTS.maxResultLength);
    const memoryLimitMb = Math.max(8, positive(options.memoryLimitMb, REACTOR_DEFAULTS.memoryLimitMb));
    this.invocationLimits = {
      timeoutMs: this.timeoutMs,
      maxLogLines: REACTOR_DEFAULTS.maxLogLines,
      maxLogLineLength: REACTOR_DEFAULTS.maxLogLineLength,
      maxSvcRequests: positive(options.maxSvcRequests, REACTOR_DEFAULTS.maxSvcRequests),
      maxTimers: REACTOR_DEFAULTS.maxTimers,
    };
    const isolateLimits: SandboxIsolateLimits = {
      memoryLimitMb,
      timeoutMs: this.timeoutMs,
      maxResultLength: this.maxResultLength,
      maxCachedScripts: positive(options.maxCachedScripts, REACTOR_DEFAULTS.maxCachedScripts),
      // A quarter of the heap at most (characters of source; bytecode is a few times smaller).
      maxCachedSourceLength: Math.floor((memoryLimitMb * 1024 * 1024) / 4),
      maxLogLines: REACTOR_DEFAULTS.maxLogLines,
      maxLogLineLength: REACTOR_DEFAULTS.maxLogLineLength,
      // A transform cannot hold more than its heap anyway; this only makes the failure a clear RangeError.
      maxBufferLength: Math.min(REACTOR_DEFAULTS.maxBufferLength, memoryLimitMb * 1024 * 1024),
      // One 8-byte slot per element: an array this long already fills the whole heap.
      maxElements: Math.floor((memoryLimitMb * 1024 * 1024) / 8),
      maxStringLength: memoryLimitMb * 1024 * 1024,
      // Measured: a 64 MiB isolate survives Maps and Sets of this size (heap/128 entries) on a full heap.
      maxCollectionEntries: Math.floor((memoryLimitMb * 1024 * 1024) / 128),
      maxDigestInput: REACTOR_DEFAULTS.maxDigestInput,
      maxRandomBytes: REACTOR_DEFAULTS.maxRandomBytes,
      // Never more than the whole timeout; 0 turns synchronous runs off.
      syncBudgetMs: Math.min(
        this.timeoutMs,
        options.syncBudgetMs === 0 ? 0 : positive(options.syncBudgetMs, REACTOR_DEFAULTS.syncBudgetMs),
      ),
    };
    const onCatastrophicError = (message: string) => {
      this.catastrophicErrors++;
      options.onCatastrophicError?.(message);
    };
    this.pool = new IsolatePool(
      {
        size: positive(options.poolSize, availableParallelism()),
        maxQueue: options.maxQueue === 0 ? 0 : positive(options.maxQueue, REACTOR_DEFAULTS.maxQueue),
        queueTimeoutMs: positive(options.queueTimeoutMs, REACTOR_DEFAULTS.queueTimeoutMs),
        prepareTimeoutMs: this.timeoutMs,
      },
      () => new SandboxIsolate(isolateLimits, onCatastrophicError, this.sandboxCounters, this.slowRuns),
    );
    this.validator = new TransformValidator(this.maxCodeLength);
  }

  /** Throws ReactorCompileError when the code does not compile (or is too long). Never runs it. */
  validate(code: string): void {
    this.validator.validate(code);
  }

  async run(input: TransformInput): Promise<TransformResult> {
    if (this.closed) return proxyErrorResult('ServiceUnavailableError', 'The transform sandbox is shutting down');
    if (typeof input?.code !== 'string') return proxyErrorResult('ReactorRuntimeError', 'The transform has no code');
    if (input.code.length > this.maxCodeLength) {
      return proxyErrorResult('ReactorRuntimeError', `The transform code is longer than ${this.maxCodeLength} characters`);
    }
    let inputJson: string;
    try {
      inputJson = JSON.stringify({ args: input.args ?? {}, configuration: input.configuration ?? {}, hasSvc: Boolean(input.svc) });
    } catch {
      return proxyErrorResult('ReactorRuntimeError', 'The transform input is not JSON-serializable');
    }
    const codeHash = this.codeHashes.of(input.code);

    let isolate: SandboxIsolate;
    try {
      isolate = await this.pool.acquire();
    } catch (error) {
      const detail = error instanceof PoolUnavailableError ? error.message : 'No sandbox is available';
      return proxyErrorResult('ServiceUnavailableError', detail);
    }

    const invocation = new Invocation(input.svc, this.invocationLimits);
    // Without a tenant to key them by, no context is kept warm (each run gets a fresh one).
    const tenantId = typeof input.tenantId === 'string' && input.tenantId !== '' ? input.tenantId : null;
    const settled = await this.executeWithDeadline(isolate, invocation, () =>
      isolate.execute(invocation, tenantId, input.code, codeHash, inputJson),
    );
    const logs = invocation.logs.slice();
    switch (settled.kind) {
      case 'done':
        this.pool.release(isolate);
        return this.toResult(settled.outcome, logs);
      case 'timeout':
        return proxyErrorResult('ReactorRuntimeError', `Transform timed out after ${this.timeoutMs} ms`, logs);
      case 'broken':
        return proxyErrorResult('ReactorRuntimeError', 'Transform ran out of memory', logs);
      case 'failed':
        if (isolate.disposed) {
          this.pool.discard(isolate);
          return proxyErrorResult('ReactorRuntimeError', 'Transform ran out of memory', logs);
        }
        if (settled.error instanceof TransformLoadError) {
          this.pool.release(isolate);
          return proxyErrorResult('ReactorRuntimeError', settled.error.message, logs);
        }
        // An isolated-vm failure we cannot classify: the isolate's state is unknown, replace it.
        this.pool.discard(isolate);
        return proxyErrorResult('ReactorRuntimeError', 'The transform could not be run', logs);
    }
  }

  stats(): ReactorStats {
    return { ...this.pool.stats(), ...this.sandboxCounters, catastrophicErrors: this.catastrophicErrors };
  }

  /**
   * Stops taking work and disposes every isolate once its invocation ends. Also waits (up to one
   * timeout) for abandoned executions to notice their isolate is gone: exiting the process while
   * an isolate thread is still inside a long builtin call can crash it on the way out.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.validator.dispose();
    await this.pool.close();
    if (this.abandoned.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.abandoned]),
        new Promise((resolve) => (timer = setTimeout(resolve, this.timeoutMs))),
      ]);
      clearTimeout(timer);
    }
  }

  /**
   * isolated-vm's own timeout covers synchronous execution only; this deadline also covers awaits
   * (svc calls, promises that never settle) and loops entered after an await. It answers at once:
   * a builtin stuck in one long call may take a while to notice its isolate was disposed, and the
   * caller must not wait for that.
   */
  private executeWithDeadline(isolate: SandboxIsolate, invocation: Invocation, execute: () => Promise<string>): Promise<Settled> {
    return new Promise<Settled>((resolve) => {
      const abandon = (kind: 'timeout' | 'broken') => {
        clearTimeout(timer);
        isolate.onBroken(null);
        invocation.end();
        this.pool.discard(isolate);
        const forget = (): void => {
          this.abandoned.delete(stopped);
        };
        const stopped: Promise<void> = running.then(forget, forget);
        this.abandoned.add(stopped);
        resolve({ kind });
      };
      const running = execute();
      const timer = setTimeout(() => abandon('timeout'), this.timeoutMs);
      isolate.onBroken(() => abandon('broken'));
      running.then(
        (outcome) => {
          clearTimeout(timer);
          isolate.onBroken(null);
          resolve({ kind: 'done', outcome });
        },
        (error: unknown) => {
          clearTimeout(timer);
          isolate.onBroken(null);
          resolve({ kind: 'failed', error });
        },
      );
    });
  }

  /** The sandbox already shaped the outcome; the host re-checks it, trusting nothing from inside. */
  private toResult(json: string, copy: string[]): TransformResult {
    if (json.length > this.maxResultLength + 1024) {
      return proxyErrorResult('ReactorRuntimeError', `The transform result exceeds ${this.maxResultLength} characters`, copy);
    }
    let outcome: Record<string, unknown>;
    try {
      outcome = JSON.parse(json) as Record<string, unknown>;
    } catch {
      return proxyErrorResult('ReactorRuntimeError', 'The transform result could not be read', copy);
    }
    if (outcome === null || typeof outcome !== 'object') {
      return proxyErrorResult('ReactorRuntimeError', 'The transform result could not be read', copy);
    }
    const headers = cleanHeaders(outcome.headers);
    if (outcome.ok === true) {
      const result: TransformResult = { ok: true, body: outcome.body, headers, logs: copy };
      if (outcome.status !== undefined) {
        if (!isStatus(outcome.status)) return proxyErrorResult('ReactorRuntimeError', 'The transform returned an invalid status', copy);
        result.status = outcome.status;
      }
      return result;
    }
    if (outcome.ok === false && isStatus(outcome.status)) {
      return { ok: false, status: outcome.status, headers, body: outcome.body, logs: copy };
    }
    return proxyErrorResult('ReactorRuntimeError', 'The transform result could not be read', copy);
  }
}

/**
 * SHA-256 of transform sources, remembered: a proxy's code reaches run() as the same string on every
 * call (its cached entity's), and V8 keeps a string's hash with the string, so the lookup is cheap
 * where hashing a long source again on every call is not. Starts over beyond `maxLength` characters
 * of sources (the Map holds the sources themselves).
 */
class CodeHashes {
  private readonly hashes = new Map<string, string>();
  private length = 0;

  constructor(private readonly maxLength = 4 * 1024 * 1024) {}

  of(code: string): string {
    let hash = this.hashes.get(code);
    if (hash === undefined) {
      if (this.length + code.length > this.maxLength) {
        this.hashes.clear();
        this.length = 0;
      }
      hash = transformCodeHash(code);
      this.hashes.set(code, hash);
      this.length += code.length;
    }
    return hash;
  }
}

function positive(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : fallback;
}

function isStatus(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 200 && value <= 599;
}

function cleanHeaders(raw: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return headers;
  for (const [name, value] of Object.entries(raw)) {
    if (name === '__proto__' || typeof value !== 'string') continue;
    if (!HEADER_NAME.test(name) || HEADER_VALUE_FORBIDDEN.test(value)) continue;
    headers[name] = value;
  }
  return headers;
}
