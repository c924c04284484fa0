/**
 * The messages between the API process and a sandbox process (Node's IPC channel, JSON): one `run`
 * per invocation and one answer, plus the svc requests of that invocation in both directions.
 */

/** Settings a sandbox process starts with, passed in its environment as JSON. */
export interface SandboxProcessSettings {
  memoryLimitMb: number;
  timeoutMs: number;
  maxSvcRequests: number;
  maxResultLength: number;
  maxCachedScripts: number;
  maxCachedSourceLength: number;
  maxLogLines: number;
  maxLogLineLength: number;
  maxTimers: number;
  maxBufferLength: number;
  maxElements: number;
  maxStringLength: number;
  maxCollectionEntries: number;
  maxDigestInput: number;
  maxRandomBytes: number;
}

export const SANDBOX_SETTINGS_ENV = 'GATEHOUSE_SANDBOX_SETTINGS';

export type FailureKind = 'load' | 'missing' | 'timeout' | 'memory' | 'error';

/** Counters of one sandbox process, reported with every answer. */
export interface SandboxCounters {
  contextsCreated: number;
  warmInvocations: number;
  compiledScripts: number;
  warmContexts: number;
}

export type ToSandbox =
  /** `code` is left out when the process was already sent this hash (it answers `missing` if it forgot it). */
  | { t: 'run'; id: number; tenantId: string | null; codeHash: string; code?: string; input: string; timeoutMs: number; svc: boolean }
  /** The answer to a svc request of invocation `id`, as the JSON the runtime's `deliver` expects. */
  | { t: 'svc'; id: number; svcId: number; payload: string };

export type FromSandbox =
  /** Started, its first context ready; `vmSizeKb` is its address space then (the cap is set from it). */
  | { t: 'ready'; vmSizeKb: number }
  | { t: 'svc'; id: number; svcId: number; request: string }
  /** The runtime's JSON outcome of invocation `id`. */
  | { t: 'done'; id: number; outcome: string; logs: string[]; counters: SandboxCounters }
  /**
   * The invocation did not produce an outcome: `load` (its code does not compile; the process is
   * healthy), `missing` (send the code again), `timeout`, `memory` or `error` (the process is replaced).
   */
  | { t: 'failed'; id: number; kind: FailureKind; message: string; logs: string[]; counters: SandboxCounters }
  /** Counters changed after the last answer (the next fresh context made, warm contexts dropped). */
  | { t: 'counters'; counters: SandboxCounters }
  /** V8 lost control of the isolate: the process must go. */
  | { t: 'catastrophic'; message: string };
