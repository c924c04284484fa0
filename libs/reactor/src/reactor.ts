import { availableParallelism } from 'node:os';
import { PoolUnavailableError, SandboxPool } from './sandbox-pool';
import { SandboxProcess, type RunOutcome } from './sandbox-process';
import { newCounters, type SandboxCounters, type SandboxProcessSettings } from './sandbox-protocol';
import { proxyErrorResult } from './transform-errors';
import { isTransformStatus, proxyErrorBody, transformHeaders } from './transform-contract';
import { transformCodeHash } from './transform-source';
import type { QueueWaitOutcome, ReactorOptions, ReactorStats, TransformInput, TransformPayload, TransformResult } from './transform-types';
import { TransformValidator } from './transform-validator';

export const REACTOR_DEFAULTS = {
  timeoutMs: 5000,
  memoryLimitMb: 64,
  maxCodeLength: 50_000,
  maxQueue: 1000,
  tenantMaxQueue: 100,
  queueTimeoutMs: 30_000,
  maxResultLength: 10 * 1024 * 1024,
  maxCachedScripts: 500,
  maxSvcRequests: 100,
  maxLogLines: 100,
  maxLogLineLength: 2000,
  maxTimers: 1000,
  maxDigestInput: 32 * 1024 * 1024,
  maxRandomBytes: 64 * 1024,
  maxOutboundRequests: 50,
  maxOutboundConnections: 6,
  /** Bodies of outbound requests and responses, both ways; also at most an eighth of the heap. */
  maxOutboundBodyBytes: 8 * 1024 * 1024,
  maxBufferLength: 256 * 1024 * 1024,
  startTimeoutMs: 20_000,
  pipelineDepth: 8,
  /** Input a sandbox process may hold for the invocations waiting inside it (it counts against its address space). */
  pipelineBytes: 1024 * 1024,
  /** A sandbox process whose invocation has run this long is given no more until it is done. */
  pipelineStallMs: 50,
} as const;

/**
 * Address space a sandbox process may add to what it reserved at start: twice the isolate's heap
 * (V8 reserves heap pages ahead of using them; array buffers are counted against the same limit by
 * isolated-vm) plus this much for the process's own work (the result's JSON, isolated-vm's threads).
 */
const PROCESS_OVERHEAD_MB = 192;

/** The address space one sandbox process may grow by, for a heap limit (see PROCESS_OVERHEAD_MB). */
export function sandboxHeadroomMb(memoryLimitMb: number): number {
  return 2 * memoryLimitMb + PROCESS_OVERHEAD_MB;
}

/** What every sandbox process of a reactor starts with (also the code-cache producer's, with a larger heap). */
export function sandboxSettings(options: ReactorOptions, memoryLimitMb: number, timeoutMs: number, maxResultLength: number): SandboxProcessSettings {
  return {
    memoryLimitMb,
    timeoutMs,
    maxSvcRequests: positive(options.maxSvcRequests, REACTOR_DEFAULTS.maxSvcRequests),
    maxResultLength,
    maxCachedScripts: positive(options.maxCachedScripts, REACTOR_DEFAULTS.maxCachedScripts),
    // A quarter of the heap at most (characters of source; bytecode is a few times smaller).
    maxCachedSourceLength: Math.floor((memoryLimitMb * 1024 * 1024) / 4),
    maxLogLines: REACTOR_DEFAULTS.maxLogLines,
    maxLogLineLength: REACTOR_DEFAULTS.maxLogLineLength,
    maxTimers: REACTOR_DEFAULTS.maxTimers,
    // A transform cannot hold more than its heap anyway; this only makes the failure a clear RangeError.
    maxBufferLength: Math.min(REACTOR_DEFAULTS.maxBufferLength, memoryLimitMb * 1024 * 1024),
    // One 8-byte slot per element: an array this long already fills the whole heap.
    maxElements: Math.floor((memoryLimitMb * 1024 * 1024) / 8),
    maxStringLength: memoryLimitMb * 1024 * 1024,
    // Measured: a 64 MiB isolate survives Maps and Sets of this size (heap/128 entries) on a full heap.
    maxCollectionEntries: Math.floor((memoryLimitMb * 1024 * 1024) / 128),
    maxDigestInput: REACTOR_DEFAULTS.maxDigestInput,
    maxRandomBytes: REACTOR_DEFAULTS.maxRandomBytes,
    maxOutboundRequests: REACTOR_DEFAULTS.maxOutboundRequests,
    maxOutboundConnections: REACTOR_DEFAULTS.maxOutboundConnections,
    maxOutboundBodyBytes: Math.min(REACTOR_DEFAULTS.maxOutboundBodyBytes, Math.floor((memoryLimitMb * 1024 * 1024) / 8)),
    outboundAllowHttp: options.outbound?.allowHttp === true,
    outboundAllowedCidrs: [...(options.outbound?.allowedPrivateCidrs ?? [])],
    ...(options.outbound?.hosts ? { outboundHosts: options.outbound.hosts } : {}),
  };
}

/** Counters that add up over the sandbox processes a reactor ever had (the others describe the live ones). */
const CUMULATIVE = ['contextsCreated', 'warmInvocations', 'modulesCompiled', 'modulesFromCodeCache', 'modulesCodeCacheRejected'] as const;
type CumulativeCounter = (typeof CUMULATIVE)[number];

/**
 * Runs tenant-written transforms in sandbox processes (SandboxProcess), shared fairly between
 * tenants (SandboxPool). `run` never rejects: every failure (the tenant's, a timeout, a full pool) is
 * a TransformResult with an error status.
 */
export class Reactor {
  private readonly timeoutMs: number;
  private readonly maxCodeLength: number;
  private readonly maxResultLength: number;
  private readonly pool: SandboxPool<SandboxProcess>;
  private readonly validator: TransformValidator;
  private closed = false;
  private catastrophicErrors = 0;
  private timeouts = 0;
  private deaths = 0;
  /** Counters of sandbox processes that are gone, so the totals survive their replacement. */
  private readonly retired: Pick<SandboxCounters, CumulativeCounter> = {
    contextsCreated: 0,
    warmInvocations: 0,
    modulesCompiled: 0,
    modulesFromCodeCache: 0,
    modulesCodeCacheRejected: 0,
  };
  private readonly codeHashes = new CodeHashes();
  private queueWaitListener: ((seconds: number, outcome: QueueWaitOutcome) => void) | null = null;
  private outboundListener: ((seconds: number, outcome: string) => void) | null = null;

  constructor(options: ReactorOptions = {}) {
    this.timeoutMs = positive(options.timeoutMs, REACTOR_DEFAULTS.timeoutMs);
    this.maxCodeLength = positive(options.maxCodeLength, REACTOR_DEFAULTS.maxCodeLength);
    this.maxResultLength = positive(options.maxResultLength, REACTOR_DEFAULTS.maxResultLength);
    const memoryLimitMb = Math.max(8, positive(options.memoryLimitMb, REACTOR_DEFAULTS.memoryLimitMb));
    const settings = sandboxSettings(options, memoryLimitMb, this.timeoutMs, this.maxResultLength);
    const onCatastrophicError = (message: string) => {
      this.catastrophicErrors++;
      options.onCatastrophicError?.(message);
    };
    const size = positive(options.poolSize, availableParallelism());
    this.pool = new SandboxPool(
      {
        size,
        // Half the pool by default: one tenant can never take every sandbox.
        tenantMaxConcurrency: Math.min(size, positive(options.tenantMaxConcurrency, Math.max(1, Math.floor(size / 2)))),
        tenantMaxQueue: positive(options.tenantMaxQueue, REACTOR_DEFAULTS.tenantMaxQueue),
        maxQueue: options.maxQueue === 0 ? 0 : positive(options.maxQueue, REACTOR_DEFAULTS.maxQueue),
        queueTimeoutMs: positive(options.queueTimeoutMs, REACTOR_DEFAULTS.queueTimeoutMs),
        // A held sandbox frees up within one timeout.
        retryAfterSeconds: Math.max(1, Math.ceil(this.timeoutMs / 1000)),
        pipelineDepth: positive(options.pipelineDepth, REACTOR_DEFAULTS.pipelineDepth),
        pipelineBytes: REACTOR_DEFAULTS.pipelineBytes,
        pipelineStallMs: REACTOR_DEFAULTS.pipelineStallMs,
      },
      () => {
        const sandbox = new SandboxProcess({
          settings,
          addressSpaceHeadroomMb: sandboxHeadroomMb(memoryLimitMb),
          startTimeoutMs: REACTOR_DEFAULTS.startTimeoutMs,
          onCatastrophicError,
          onOutbound: (ms, outcome) => this.outboundListener?.(ms / 1000, outcome),
        });
        void sandbox.exitedOnce().then(() => {
          for (const name of CUMULATIVE) this.retired[name] += sandbox.counters[name];
        });
        return sandbox;
      },
    );
    this.validator = new TransformValidator(this.maxCodeLength);
  }

  /**
   * Called once per invocation that asked for a sandbox process: how long it waited for one (from run()
   * until it started running, through any queue and the invocations ahead of it in its process), and
   * how the wait ended: `ran`, `refused` (its tenant's queue or the whole queue was full, or the
   * reactor is closing) or `timed_out` (no process within the queue timeout). One listener (metrics).
   */
  onQueueWait(listener: (seconds: number, outcome: QueueWaitOutcome) => void): void {
    this.queueWaitListener = listener;
  }

  /**
   * Called once per outbound request of a transform (fetch, http.request) as it ends: its duration and how it ended
   * (ok, refused, limit, error, timeout, too_large). One listener (metrics).
   */
  onOutbound(listener: (seconds: number, outcome: string) => void): void {
    this.outboundListener = listener;
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
      const fields: Record<string, unknown> = { args: input.args ?? {}, configuration: input.configuration ?? {}, hasSvc: Boolean(input.svc) };
      if (input.payloadResult === true) fields.payload = true;
      inputJson = JSON.stringify(fields);
    } catch {
      return proxyErrorResult('ReactorRuntimeError', 'The transform input is not JSON-serializable');
    }
    const body = bodyField(input.rawBody);
    const codeHash = this.codeHashes.of(input.code);
    // Without a tenant to key them by, no context is kept warm (each run gets a fresh one).
    const tenantId = typeof input.tenantId === 'string' && input.tenantId !== '' ? input.tenantId : null;

    // The input waits inside a sandbox process while it runs what was sent before (see SandboxPool).
    const size = inputJson.length + body.length;
    const asked = performance.now();
    let requeued = false;
    for (;;) {
      let sandbox: SandboxProcess;
      try {
        sandbox = await this.pool.acquire(tenantId ?? '', size, requeued);
      } catch (error) {
        const timedOut = error instanceof PoolUnavailableError && error.timedOut;
        this.queueWaitListener?.((performance.now() - asked) / 1000, timedOut ? 'timed_out' : 'refused');
        if (error instanceof PoolUnavailableError)
          return { ...proxyErrorResult('ServiceUnavailableError', error.message), retryAfterSeconds: error.retryAfterSeconds };
        return proxyErrorResult('ServiceUnavailableError', 'No sandbox is available');
      }
      const settled = await sandbox.run({ tenantId, code: input.code, codeHash, inputJson, body, svc: input.svc });
      if (settled.kind !== 'requeue') this.queueWaitListener?.(Math.max(0, settled.startedAt - asked) / 1000, 'ran');
      if (settled.kind === 'requeue') {
        // Never started: the process was stopped for the invocation before it. First in line again.
        this.pool.release(sandbox, size);
        requeued = true;
        continue;
      }
      const result = this.settle(sandbox, size, settled);
      if (settled.outbound) result.outbound = settled.outbound;
      return result;
    }
  }

  private settle(sandbox: SandboxProcess, size: number, settled: Exclude<RunOutcome, { kind: 'requeue' }>): TransformResult {
    const logs = settled.logs;
    switch (settled.kind) {
      case 'done':
        this.pool.release(sandbox, size);
        return this.toResult(settled.outcome, logs);
      case 'deadline':
        this.timeouts++;
        this.pool.discard(sandbox);
        return proxyErrorResult('ReactorRuntimeError', `Transform timed out after ${this.timeoutMs} ms`, logs);
      case 'died':
        this.deaths++;
        this.pool.discard(sandbox);
        return proxyErrorResult('ReactorRuntimeError', 'Transform ran out of memory', logs);
      case 'failed':
        if (settled.failure === 'load') {
          this.pool.release(sandbox, size);
          return proxyErrorResult('ReactorRuntimeError', settled.message, logs);
        }
        this.pool.discard(sandbox);
        if (settled.failure === 'timeout') {
          this.timeouts++;
          return proxyErrorResult('ReactorRuntimeError', `Transform timed out after ${this.timeoutMs} ms`, logs);
        }
        if (settled.failure === 'memory') return proxyErrorResult('ReactorRuntimeError', 'Transform ran out of memory', logs);
        return proxyErrorResult('ReactorRuntimeError', 'The transform could not be run', logs);
    }
  }

  stats(): ReactorStats {
    const live = newCounters();
    const pids: number[] = [];
    for (const sandbox of this.pool.sandboxes()) {
      for (const name of Object.keys(live) as (keyof SandboxCounters)[]) live[name] += sandbox.counters[name];
      if (sandbox.pid !== undefined) pids.push(sandbox.pid);
    }
    for (const name of CUMULATIVE) live[name] += this.retired[name];
    return {
      ...this.pool.stats(),
      pids,
      ...live,
      timeouts: this.timeouts,
      crashes: this.deaths,
      catastrophicErrors: this.catastrophicErrors,
    };
  }

  /**
   * Stops taking work, lets running invocations finish (each bounded by its timeout), and stops
   * every sandbox process.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.validator.dispose();
    await this.pool.close(this.timeoutMs);
  }

  /**
   * The sandbox already shaped the outcome; the host re-checks it, trusting nothing from inside. The outcome
   * is the runtime's JSON, or (asked for with `payload`) its JSON without the body, a tab, and the body as
   * `j<JSON text>` or `t<the transform's string>`.
   */
  private toResult(raw: string, copy: string[]): TransformResult {
    if (raw.length > this.maxResultLength + 1024) {
      return proxyErrorResult('ReactorRuntimeError', `The transform result exceeds ${this.maxResultLength} characters`, copy);
    }
    const tab = raw.indexOf('\t');
    const json = tab === -1 ? raw : raw.slice(0, tab);
    let outcome: Record<string, unknown>;
    try {
      outcome = JSON.parse(json) as Record<string, unknown>;
    } catch {
      return proxyErrorResult('ReactorRuntimeError', 'The transform result could not be read', copy);
    }
    if (outcome === null || typeof outcome !== 'object') {
      return proxyErrorResult('ReactorRuntimeError', 'The transform result could not be read', copy);
    }
    let payload: TransformPayload | undefined;
    if (tab !== -1) {
      const kind = raw.charAt(tab + 1);
      if (kind !== 'j' && kind !== 't') return proxyErrorResult('ReactorRuntimeError', 'The transform result could not be read', copy);
      payload = { text: raw.slice(tab + 2), json: kind === 'j' };
    }
    return contractResult(outcome, payload, copy);
  }
}

/** A result held to the transform contract (transform-contract.ts): anything it refuses becomes a ReactorRuntimeError. */
function contractResult(outcome: Record<string, unknown>, payload: TransformPayload | undefined, logs: string[]): TransformResult {
  if (outcome.ok === false && outcome.error !== null && typeof outcome.error === 'object') {
    const description = outcome.error as { title?: unknown; status?: unknown; detail?: unknown; errors?: unknown };
    if (!isTransformStatus(description.status)) return proxyErrorResult('ReactorRuntimeError', 'The transform result could not be read', logs);
    return { ok: false, status: description.status, headers: {}, body: proxyErrorBody({ ...description, status: description.status }), logs };
  }
  const checked = transformHeaders(outcome.headers);
  if ('problem' in checked) return proxyErrorResult('ReactorRuntimeError', checked.problem, logs);
  const { headers } = checked;
  if (outcome.ok === true) {
    const result: TransformResult = { ok: true, body: outcome.body, headers, logs };
    if (payload) result.payload = payload;
    if (outcome.status !== undefined) {
      if (!isTransformStatus(outcome.status))
        return proxyErrorResult('ReactorRuntimeError', `The transform returned an invalid status: ${String(outcome.status).slice(0, 40)}`, logs);
      result.status = outcome.status;
    }
    return result;
  }
  if (outcome.ok === false) {
    // CustomHttpResponseError: its status, headers and body as they are.
    if (!isTransformStatus(outcome.status))
      return proxyErrorResult('ReactorRuntimeError', 'CustomHttpResponseError status must be an integer from 200 to 599', logs);
    const result: TransformResult = { ok: false, status: outcome.status, headers, body: outcome.body, logs };
    if (payload) result.payload = payload;
    return result;
  }
  return proxyErrorResult('ReactorRuntimeError', 'The transform result could not be read', logs);
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

/**
 * The frame field of a body passed as it arrived (TransformInput.rawBody): '' for none, else its kind (`j`
 * JSON to parse, `t` text) and the text; a text holding a newline, which would end the frame, goes as a JSON
 * string under `J` or `T`.
 */
function bodyField(raw: TransformPayload | undefined): string {
  if (raw === undefined || raw === null || typeof raw.text !== 'string') return '';
  if (raw.text.includes('\n')) return `${raw.json ? 'J' : 'T'}${JSON.stringify(raw.text)}`;
  return `${raw.json ? 'j' : 't'}${raw.text}`;
}

function positive(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : fallback;
}
