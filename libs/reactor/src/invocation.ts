import type { SvcBridge, SvcRequest } from './transform-types';

export interface InvocationLimits {
  timeoutMs: number;
  maxLogLines: number;
  maxLogLineLength: number;
  maxSvcRequests: number;
  maxTimers: number;
}

/** Hands a payload to the sandbox's `deliver(id, payload)`; set by the context the invocation runs in. */
export type Deliver = (id: number, payload: string | null) => void;

const SVC_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Host-side state of one run: captured logs, svc requests and timers started by the sandbox.
 * Once ended, nothing reaches the sandbox again: a late svc answer or timer is dropped, so a
 * finished transform can never wake up and run while the isolate serves someone else.
 */
export class Invocation {
  readonly logs: string[] = [];
  private active = true;
  private svcStarted = 0;
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private deliverTo: Deliver | null = null;
  /** svc requests accepted while held (see holdSvc), sent on releaseSvc. */
  private held: Array<() => void> | null = null;

  constructor(
    private readonly svc: SvcBridge | undefined,
    private readonly limits: InvocationLimits,
  ) {}

  /** Binds the invocation to the sandbox context it runs in. */
  attach(deliver: Deliver): void {
    this.deliverTo = deliver;
  }

  /**
   * Until releaseSvc(), svc requests are accepted, checked and counted but not sent. A synchronous
   * attempt (SandboxIsolate.runSync) holds them: if it goes over its budget it is stopped and run
   * again, and only then may nothing of the first attempt have left the sandbox.
   */
  holdSvc(): void {
    this.held = [];
  }

  /** Sends the svc requests held since holdSvc(), in the order they were made. */
  releaseSvc(): void {
    const held = this.held;
    this.held = null;
    if (held) for (const send of held) send();
  }

  /** Forgets an attempt that was stopped before anything of it left the sandbox, for a second attempt. */
  restart(): void {
    this.active = true;
    this.logs.length = 0;
    this.svcStarted = 0;
    this.held = null;
    this.deliverTo = null;
    this.clearTimers();
  }

  log(level: unknown, line: unknown): void {
    if (!this.active || this.logs.length >= this.limits.maxLogLines || typeof line !== 'string') return;
    const text = line.length > this.limits.maxLogLineLength ? line.slice(0, this.limits.maxLogLineLength) : line;
    this.logs.push(level === 'log' || typeof level !== 'string' ? text : `[${level}] ${text}`);
  }

  /** Starts an svc request; the answer arrives later through deliver(id, json). Returns an error message or null. */
  startSvc(id: unknown, requestJson: unknown): string | null {
    if (!this.active) return 'the invocation has ended';
    if (!this.svc) return 'svc is not available: the proxy names no application';
    if (typeof id !== 'number' || typeof requestJson !== 'string') return 'invalid svc request';
    if (this.svcStarted >= this.limits.maxSvcRequests) {
      return `a transform may make at most ${this.limits.maxSvcRequests} svc requests`;
    }
    const request = parseSvcRequest(requestJson);
    if (typeof request === 'string') return request;
    this.svcStarted++;
    if (this.held) this.held.push(() => this.sendSvc(id, request));
    else this.sendSvc(id, request);
    return null;
  }

  private sendSvc(id: number, request: SvcRequest): void {
    if (!this.active || !this.svc) return;
    let pending: Promise<{ status: unknown; body: unknown }>;
    try {
      pending = Promise.resolve(this.svc.request(request));
    } catch {
      pending = Promise.reject(new Error('svc bridge threw'));
    }
    pending.then(
      (response) => {
        if (!this.active) return;
        let payload: string;
        try {
          payload =
            typeof response?.status === 'number'
              ? JSON.stringify({ status: response.status, body: response.body })
              : JSON.stringify({ error: 'the service answered without a status' });
        } catch {
          payload = JSON.stringify({ error: 'the service answer is not JSON' });
        }
        this.deliver(id, payload);
      },
      // The bridge's own error (internal addresses, a host stack) reaches the tenant only when the
      // bridge marked it as meant for it, and then only its message.
      (error: unknown) => {
        if (this.active) this.deliver(id, JSON.stringify(exposedFailure(error) ?? { error: 'the service request could not be completed' }));
      },
    );
  }

  startTimer(id: unknown, ms: unknown): string | null {
    if (!this.active) return 'the invocation has ended';
    if (typeof id !== 'number' || typeof ms !== 'number') return 'invalid timer';
    if (this.timers.size >= this.limits.maxTimers) return `at most ${this.limits.maxTimers} timers may be pending`;
    const delay = Math.max(0, Math.min(Number.isFinite(ms) ? ms : 0, this.limits.timeoutMs));
    this.timers.set(
      id,
      setTimeout(() => {
        this.timers.delete(id);
        if (this.active) this.deliver(id, null);
      }, delay),
    );
    return null;
  }

  clearTimer(id: unknown): void {
    if (typeof id !== 'number') return;
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
  }

  private deliver(id: number, payload: string | null): void {
    if (this.active && this.deliverTo) this.deliverTo(id, payload);
  }

  end(): void {
    this.active = false;
    this.deliverTo = null;
    this.held = null;
    this.clearTimers();
  }

  private clearTimers(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}

/** An error thrown with `expose: true` (the http-errors convention) is the bridge refusing on purpose. */
function exposedFailure(error: unknown): { error: string; status: number } | null {
  if (error === null || typeof error !== 'object') return null;
  const { expose, message, status } = error as { expose?: unknown; message?: unknown; status?: unknown };
  if (expose !== true || typeof message !== 'string') return null;
  const valid = typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599;
  return { error: message.slice(0, 1000), status: valid ? status : 400 };
}

function parseSvcRequest(json: string): SvcRequest | string {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return 'invalid svc request';
  }
  if (raw === null || typeof raw !== 'object') return 'invalid svc request';
  const { method, path, body, query } = raw as Record<string, unknown>;
  if (typeof method !== 'string' || !SVC_METHODS.has(method)) return `unsupported method ${String(method)}`;
  if (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('//') || /[\u0000-\u001f\\]/.test(path)) {
    return 'svc path must be an absolute path such as /applications';
  }
  const request: SvcRequest = { method, path };
  if (body !== undefined) request.body = body;
  if (query !== undefined && query !== null && typeof query === 'object') {
    const clean: Record<string, string | string[]> = {};
    for (const [key, value] of Object.entries(query)) {
      if (key === '__proto__') continue;
      if (typeof value === 'string') clean[key] = value;
      else if (Array.isArray(value)) clean[key] = value.filter((v): v is string => typeof v === 'string');
    }
    if (Object.keys(clean).length > 0) request.query = clean;
  }
  return request;
}
