export interface ReactorOptions {
  /** Number of isolates, i.e. invocations running at once. Default: os.availableParallelism(). */
  poolSize?: number;
  /** Wall-clock limit of one invocation, svc calls and awaits included. Default 5000. */
  timeoutMs?: number;
  /** Heap limit of each isolate. Default 64. */
  memoryLimitMb?: number;
  /** Longest accepted transform source. Default 50,000 characters. */
  maxCodeLength?: number;
  /** Invocations allowed to wait for a free isolate; beyond that run() answers 503. Default 1000. */
  maxQueue?: number;
  /** Longest wait for a free isolate before run() answers 503. Default 30,000 ms. */
  queueTimeoutMs?: number;
  /** Largest JSON-serialised transform result, in characters. Default 10 MiB. */
  maxResultLength?: number;
  /** Compiled scripts kept per isolate (least recently used are dropped). Default 500. */
  maxCachedScripts?: number;
  /** svc requests one invocation may start. Default 100. */
  maxSvcRequests?: number;
  /**
   * Longest a warm run of a cheap transform may take on the service's own thread before it is stopped
   * and run again on the isolate's thread (see SandboxIsolate.runSync). 0 runs every transform on the
   * isolate's thread. Default 5 ms.
   */
  syncBudgetMs?: number;
  /**
   * isolated-vm reports that V8 lost control of an isolate. The isolate is replaced either way; the
   * isolated-vm authors advise finishing outstanding work and restarting the process.
   */
  onCatastrophicError?: (message: string) => void;
}

export interface SvcRequest {
  method: string;
  path: string;
  body?: unknown;
  query?: Record<string, string | string[]>;
}

export interface SvcResponse {
  status: number;
  body: unknown;
}

/**
 * Makes a transform's svc calls. Answer every HTTP outcome as a SvcResponse (non-2xx included). A
 * rejection reaches the transform as a generic 502 failure, unless the error carries `expose: true`:
 * then its message (and `status`, 400-599, default 400) is what the transform sees.
 */
export interface SvcBridge {
  request(req: SvcRequest): Promise<SvcResponse>;
}

export interface TransformInput {
  tenantId: string;
  code: string;
  /** {body, headers, method, path, query} for a request transform, {body, headers, status} for a response one. */
  args: Record<string, unknown>;
  configuration: Record<string, string>;
  /** Present only when the proxy names an application. */
  svc?: SvcBridge;
}

export type TransformResult =
  | { ok: true; body: unknown; headers: Record<string, string>; status?: number; logs: string[] }
  | { ok: false; status: number; headers: Record<string, string>; body: unknown; logs: string[] };

export interface ReactorStats {
  isolates: number;
  compiledScripts: number;
  busy: number;
  queued: number;
  replaced: number;
  /** Sandbox contexts bootstrapped since the reactor started (each costs the runtime's bootstrap). */
  contextsCreated: number;
  /** Contexts kept warm for later runs of the same tenant and code, over all isolates. */
  warmContexts: number;
  /** Invocations that ran in a warm context. */
  warmInvocations: number;
  /** Warm invocations run synchronously on the service's thread (cheap transforms). */
  syncInvocations: number;
  /** Synchronous runs stopped at their budget and run again on the isolate's thread. */
  syncOverruns: number;
  /**
   * Isolates lost to an out-of-memory V8 could not contain. Each leaves a parked thread and its
   * memory behind until the process exits: restart the process when this grows.
   */
  catastrophicErrors: number;
}
