import { AddressPolicy } from './address-policy';
import { OutboundHttp, type OutboundOutcome, type OutboundSettings } from './outbound-http';
import { parseSvcRequest } from './svc-bridge-relay';

export interface InvocationLimits extends OutboundSettings {
  timeoutMs: number;
  maxSvcRequests: number;
  maxLogLines: number;
  maxLogLineLength: number;
  maxTimers: number;
}

/** Host work (crypto.subtle calls) one invocation may have pending at once. */
export const MAX_PENDING_TASKS = 64;

/** Hands a payload (and bytes) to the sandbox's `deliver(id, payload, bytes)`; set by the context the invocation runs in. */
export type Deliver = (id: number, payload: string | null, bytes?: ArrayBuffer) => void;

/** Reports one outbound request of the invocation: how long it took and how it ended. */
export type ReportOutbound = (ms: number, outcome: OutboundOutcome) => void;

/** Sends a svc request of the sandbox to the API process, which checks, counts and answers it. */
export type ForwardSvc = (svcId: number, requestJson: string) => void;

/**
 * Sandbox-process state of one run: captured logs, svc requests and timers started by the sandbox.
 * Once ended, nothing reaches the sandbox again: a late svc answer or timer is dropped, so a
 * finished transform can never wake up and run while the isolate serves someone else.
 */
export class Invocation {
  readonly logs: string[] = [];
  private active = true;
  private svcStarted = 0;
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private deliverTo: Deliver | null = null;
  private tasks = 0;
  /** Outbound HTTP, made on the first request. */
  private outbound: OutboundHttp | null = null;

  constructor(
    private readonly forwardSvc: ForwardSvc | null,
    private readonly limits: InvocationLimits,
    private readonly reportOutbound: ReportOutbound = () => undefined,
  ) {}

  /** Binds the invocation to the sandbox context it runs in. */
  attach(deliver: Deliver): void {
    this.deliverTo = deliver;
  }

  log(level: unknown, line: unknown): void {
    if (!this.active || this.logs.length >= this.limits.maxLogLines || typeof line !== 'string') return;
    const text = line.length > this.limits.maxLogLineLength ? line.slice(0, this.limits.maxLogLineLength) : line;
    this.logs.push(level === 'log' || typeof level !== 'string' ? text : `[${level}] ${text}`);
  }

  /** Starts an svc request; the answer arrives later through deliver(id, json). Returns an error message or null. */
  startSvc(id: unknown, requestJson: unknown): string | null {
    if (!this.active) return 'the invocation has ended';
    if (!this.forwardSvc) return 'svc is not available: the proxy names no application';
    if (typeof id !== 'number' || typeof requestJson !== 'string') return 'invalid svc request';
    // Checked here so the transform sees a refusal at once, as a thrown error; SvcBridgeRelay checks again.
    if (this.svcStarted >= this.limits.maxSvcRequests) return `a transform may make at most ${this.limits.maxSvcRequests} svc requests`;
    const request = parseSvcRequest(requestJson);
    if (typeof request === 'string') return request;
    this.svcStarted++;
    this.forwardSvc(id, requestJson);
    return null;
  }

  /** The API process's answer to a svc request (see SvcBridgeRelay). */
  svcAnswered(id: number, payload: string): void {
    this.deliver(id, payload);
  }

  /**
   * Starts host work of the sandbox (a crypto.subtle call): its JSON answer is delivered like a svc answer, unless the
   * invocation has ended by then. At most MAX_PENDING_TASKS at a time.
   */
  startTask(id: unknown, task: () => Promise<string>): string | null {
    if (!this.active) return 'the invocation has ended';
    if (typeof id !== 'number') return 'invalid task';
    if (this.tasks >= MAX_PENDING_TASKS) return `at most ${MAX_PENDING_TASKS} crypto operations may be pending`;
    this.tasks++;
    void task().then((payload) => {
      this.tasks--;
      this.deliver(id, payload);
    });
    return null;
  }

  /** Starts an outbound request (fetch, http.request); the response arrives later through deliver. */
  startHttp(id: unknown, requestJson: unknown, body: unknown): string | null {
    if (!this.active) return 'the invocation has ended';
    this.outbound ??= new OutboundHttp(
      this.limits,
      policyFor(this.limits),
      (requestId, head, bytes) => this.deliver(requestId, head, bytes),
      this.reportOutbound,
    );
    return this.outbound.start(id, requestJson, body);
  }

  abortHttp(id: unknown): void {
    this.outbound?.abort(id);
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

  private deliver(id: number, payload: string | null, bytes?: ArrayBuffer): void {
    if (this.active && this.deliverTo) this.deliverTo(id, payload, bytes);
  }

  end(): void {
    this.active = false;
    this.deliverTo = null;
    this.outbound?.end();
    this.outbound = null;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}

/** One policy per sandbox process (its settings never change). */
let policy: AddressPolicy | null = null;
function policyFor(limits: InvocationLimits): AddressPolicy {
  policy ??= new AddressPolicy(limits.outboundAllowHttp, limits.outboundAllowedCidrs);
  return policy;
}
