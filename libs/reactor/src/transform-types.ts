export interface ReactorOptions {
  /** Number of sandbox processes, i.e. invocations running at once. Default: os.availableParallelism(). */
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
   * Sandbox processes one tenant may hold at once; its further invocations wait in its own queue.
   * Default: half the pool (at least 1).
   */
  tenantMaxConcurrency?: number;
  /** Invocations of one tenant allowed to wait beyond its share; beyond that run() answers 503. Default 100. */
  tenantMaxQueue?: number;
  /**
   * Invocations of one tenant a sandbox process may be given at once, run one after the other (see
   * SandboxPool). Default 8; 1 turns pipelining off.
   */
  pipelineDepth?: number;
  /**
   * isolated-vm reports that V8 lost control of an isolate. Its sandbox process is stopped and
   * replaced; the API process is not affected.
   */
  onCatastrophicError?: (message: string) => void;
  /**
   * Where transforms' own requests (fetch, http.request) may go: the proxies' destination policy. Default: https only,
   * public addresses only.
   */
  outbound?: {
    allowHttp?: boolean;
    /** Ranges of non-public addresses allowed all the same (PROXY_ALLOWED_PRIVATE_CIDRS). */
    allowedPrivateCidrs?: readonly string[];
    /** Fixed name resolution tried before DNS, each lookup answering the next address in turn (tests only). */
    hosts?: Record<string, string[]>;
  };
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
  /**
   * The body as it arrived, for a caller that has not parsed it (the proxy): the sandbox sets `args.body`
   * from it as the proxy would have (the parsed value when `json` and the text parses, else the text; null
   * when empty), so the API process neither parses the body nor serialises it again into the run's input.
   */
  rawBody?: TransformPayload;
  /**
   * The caller sends the result's body as it is (the proxy): the result then carries it as `payload`, the
   * text the sandbox serialised, instead of a parsed `body` the caller would serialise again.
   */
  payloadResult?: boolean;
}

/** A body as text: JSON text (`json`: the transform's value, serialised) or the transform's own string. */
export interface TransformPayload {
  text: string;
  json: boolean;
}

/**
 * `payload` is set instead of `body` (then undefined) when the input asked for `payloadResult` and the
 * transform's body was neither null nor undefined.
 */
/** The outbound requests a run made: how many, and their durations added up (ms). */
export interface OutboundTally {
  requests: number;
  ms: number;
}

export type TransformResult =
  | { ok: true; body: unknown; payload?: TransformPayload; headers: Record<string, string>; status?: number; logs: string[]; outbound?: OutboundTally }
  | {
      ok: false;
      outbound?: OutboundTally;
      status: number;
      headers: Record<string, string>;
      body: unknown;
      payload?: TransformPayload;
      logs: string[];
      /** Set when the sandbox pool (or the tenant's share of it) is full: answer 503 with this Retry-After. */
      retryAfterSeconds?: number;
    };

/** How an invocation's wait for a sandbox process ended (see Reactor.onQueueWait). */
export type QueueWaitOutcome = 'ran' | 'refused' | 'timed_out';

export interface ReactorStats {
  /** Sandbox processes alive (started or starting). */
  processes: number;
  /** Of those, how many are still starting. */
  starting: number;
  /** Their process ids. */
  pids: number[];
  compiledScripts: number;
  /** Invocations running. */
  busy: number;
  /** Invocations waiting for a sandbox. */
  queued: number;
  /** Sandbox processes stopped and replaced (after a timeout, an out-of-memory, a crash). */
  replaced: number;
  /** Invocations given to a sandbox process while it was running an earlier one of the same tenant (pipelined). */
  pipelined: number;
  /** Invocations refused with 503: a full queue, or no sandbox in time. */
  refused: number;
  /** Sandbox contexts bootstrapped since the reactor started (each costs the runtime's bootstrap). */
  contextsCreated: number;
  /** Contexts kept warm for later runs of the same tenant and code, over all sandboxes. */
  warmContexts: number;
  /** Invocations that ran in a warm context. */
  warmInvocations: number;
  /** Invocations stopped at their timeout. */
  timeouts: number;
  /** Sandbox processes that died during an invocation (their address-space cap, a crash). */
  crashes: number;
  /** Isolates V8 lost control of (out of memory inside one builtin call); each cost its sandbox process. */
  catastrophicErrors: number;
  /** Bundled modules compiled by the sandbox processes (each on its first `require` in a process). */
  modulesCompiled: number;
  /** Of those, the ones compiled from the build's code cache (see module-code-cache.ts). */
  modulesFromCodeCache: number;
  /** Code caches V8 refused (made by another V8 or with other flags): those modules were compiled from their source. */
  modulesCodeCacheRejected: number;
}
