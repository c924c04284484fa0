import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { SvcBridgeRelay } from './svc-bridge-relay';
import {
  decodeCounters,
  frameFields,
  FrameReader,
  FrameWriter,
  newCounters,
  SANDBOX_SETTINGS_ENV,
  stringField,
  type FailureKind,
  type SandboxCounters,
  type SandboxProcessSettings,
} from './sandbox-protocol';
import type { OutboundTally, SvcBridge } from './transform-types';

export interface SandboxProcessOptions {
  settings: SandboxProcessSettings;
  /** Address space allowed beyond what the process had once started (see start()). */
  addressSpaceHeadroomMb: number;
  /** Longest a process may take to start before it counts as failed. */
  startTimeoutMs: number;
  onCatastrophicError(message: string): void;
  /** One outbound request of a transform ended (see the `o` frame). */
  onOutbound?(ms: number, outcome: string): void;
}

export interface SandboxRun {
  tenantId: string | null;
  code: string;
  codeHash: string;
  inputJson: string;
  /** The body passed as it arrived: '' or its frame field (see the `r` frame in sandbox-protocol.ts). */
  body: string;
  svc: SvcBridge | undefined;
}

/** `startedAt`: when it started running (performance.now()), i.e. when the one before it was answered. */
export type RunOutcome =
  | { kind: 'done'; outcome: string; logs: string[]; startedAt: number; outbound?: OutboundTally }
  | { kind: 'failed'; failure: FailureKind; message: string; logs: string[]; startedAt: number; outbound?: OutboundTally }
  /** Stopped at its deadline by this process (the sandbox process is killed). */
  | { kind: 'deadline'; logs: string[]; startedAt: number; outbound?: OutboundTally }
  /** The sandbox process died during the run (its address-space cap, a crash, V8 losing control). */
  | { kind: 'died'; logs: string[]; startedAt: number; outbound?: OutboundTally }
  /**
   * Never started: the process was stopped (for the invocation before it, or at shutdown) while this
   * one waited inside it. Run it elsewhere.
   */
  | { kind: 'requeue' };

/**
 * Node's arguments of every sandbox process. The build's code-cache producer (code-cache-child.ts) runs with the same,
 * as V8 accepts a code cache only under the flags that made it. `--expose-gc` gives the runtime a collection to judge
 * a run's heap after (SandboxIsolate.checkHeap); the runtime takes `gc` away from transforms (runtime/intrinsics.js).
 */
export const SANDBOX_EXEC_ARGV = ['--no-node-snapshot', '--disable-warning=ExperimentalWarning', '--expose-gc'] as const;

/** The entry of a sandbox process, and how to run it: compiled, or from the TypeScript sources under Jest. */
function childEntry(): { module: string; execArgv: string[] } {
  const execArgv = [...SANDBOX_EXEC_ARGV];
  if (__filename.endsWith('.js')) return { module: join(__dirname, 'sandbox-child.js'), execArgv };
  return { module: join(__dirname, 'sandbox-child.ts'), execArgv: [...execArgv, '--require', join(__dirname, 'register-ts-sources.js')] };
}

/** An invocation sent to the process and not answered yet. */
interface InFlight {
  id: number;
  run: SandboxRun;
  resolve(outcome: RunOutcome): void;
  /** When it became the one running (performance.now()), 0 while it waits behind another. */
  startedAt: number;
  relay: SvcBridgeRelay | null;
  outbound: OutboundTally | null;
}

let nextRunId = 1;

/**
 * One sandbox process, seen from the API process. The process holds one isolate and runs the
 * invocations it is sent one after the other; several may be sent ahead (pipelined), so a busy
 * process goes from one to the next without waiting for the API process. The API process can stop
 * it at any instruction (SIGKILL), and its address space is capped by the kernel (RLIMIT_AS, set with
 * prlimit once it has started, before it gets any work): whatever a transform allocates, inside V8's
 * heap or outside it (array buffers, resizable or not, flattened strings), the process can grow by at
 * most `addressSpaceHeadroomMb`, and beyond that its allocations fail or it dies, never the API process.
 *
 * The invocation running is always the oldest unanswered one (the process runs them in the order
 * sent), and its deadline counts from when the one before it was answered: when the process is
 * stopped, that one fails and the ones behind it, never started, are handed back (`requeue`).
 */
export class SandboxProcess {
  private readonly child: ChildProcess;
  private readonly toChild: Writable;
  private readonly inFlight: InFlight[] = [];
  /** One timer for the running invocation's deadline, re-armed only when it fires early. */
  private deadlineTimer: NodeJS.Timeout | null = null;
  /** Frames to the process, coalesced per turn of the event loop. */
  private readonly writer: FrameWriter;
  /** Code hashes sent to the process; it may have evicted some since (it then asks again). */
  private readonly sentCode = new Set<string>();
  private stopped = false;
  private exited = false;
  private readonly exitedPromise: Promise<void>;
  private readyFrame: ((vmSizeKb: number) => void) | null = null;
  readonly ready: Promise<void>;
  readonly counters: SandboxCounters = newCounters();

  constructor(private readonly options: SandboxProcessOptions) {
    const entry = childEntry();
    this.child = spawn(process.execPath, [...entry.execArgv, entry.module], {
      // Nothing of the service's environment (database URL, secrets) reaches the sandbox. One malloc
      // arena per thread would reserve 64 MiB of address space each: two keep the cap meaningful.
      env: { [SANDBOX_SETTINGS_ENV]: JSON.stringify(options.settings), MALLOC_ARENA_MAX: '2' },
      // fd 3: frames to the process; fd 4: frames from it (see sandbox-protocol.ts).
      stdio: ['ignore', 'ignore', 'inherit', 'pipe', 'pipe'],
    });
    this.toChild = this.child.stdio[3] as Writable;
    this.writer = new FrameWriter((text) => this.toChild.write(text));
    const fromChild = this.child.stdio[4] as Readable;
    // A write to a process that just died: its end is handled below.
    this.toChild.on('error', () => undefined);
    const reader = new FrameReader(
      options.settings.maxResultLength * 2 + 1024 * 1024,
      (frame) => this.onFrame(frame),
      () => this.stop('died'),
    );
    fromChild.setEncoding('utf8');
    fromChild.on('data', (chunk: string) => reader.push(chunk));
    // Everything the process wrote has been read: what it was running died with it.
    fromChild.once('close', () => {
      reader.stop();
      this.stop('died');
    });
    fromChild.on('error', () => undefined);
    this.exitedPromise = new Promise((resolve) => this.child.once('exit', () => resolve()));
    this.child.once('exit', () => {
      this.exited = true;
      this.stopped = true;
    });
    this.child.on('error', () => undefined);
    this.ready = this.start();
    this.ready.catch(() => this.kill());
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return !this.stopped;
  }

  /** Invocations sent and not answered yet. */
  get pending(): number {
    return this.inFlight.length;
  }

  /**
   * Sends one invocation; it runs once those sent before it are answered. Never rejects. The pool
   * decides how many may wait inside one process (and never sends another tenant's behind them).
   */
  run(run: SandboxRun): Promise<RunOutcome> {
    if (this.stopped) return Promise.resolve({ kind: 'requeue' });
    return new Promise<RunOutcome>((resolve) => {
      const entry: InFlight = { id: nextRunId++, run, resolve, startedAt: 0, relay: null, outbound: null };
      this.inFlight.push(entry);
      if (this.inFlight.length === 1) this.started(entry);
      const withCode = !this.sentCode.has(run.codeHash);
      if (withCode) this.remember(run.codeHash);
      const tenant = run.tenantId === null ? 'null' : JSON.stringify(run.tenantId);
      this.send(`r\t${entry.id}\t${run.svc ? 1 : 0}\t${run.codeHash}\t${tenant}\t${withCode ? JSON.stringify(run.code) : ''}\t${run.inputJson}\t${run.body}`);
    });
  }

  /** Stops the process at once; what it was running died with it, what waited behind is handed back. */
  kill(): void {
    this.stop('died');
  }

  /** Resolves once the process has exited. */
  exitedOnce(): Promise<void> {
    return this.exitedPromise;
  }

  /** When the running invocation started (performance.now()); 0 when none runs. */
  runningSince(): number {
    return this.inFlight[0]?.startedAt ?? 0;
  }

  private started(entry: InFlight): void {
    entry.startedAt = performance.now();
    this.deadlineTimer ??= setTimeout(() => this.checkDeadline(), this.options.settings.timeoutMs);
  }

  /**
   * The host's deadline, whatever the sandbox is doing (a loop, a long builtin call, an await): answered
   * now, and the process is stopped now. One timer serves every invocation in turn: when it fires before
   * the running invocation's deadline, it is set again for what is left.
   */
  private checkDeadline(): void {
    this.deadlineTimer = null;
    const head = this.inFlight[0];
    if (!head) return;
    if (this.stopped) {
      // Exited, and its pipe never reported the end (it always should): what it ran is answered all the same.
      this.stop('died');
      return;
    }
    const left = head.startedAt + this.options.settings.timeoutMs - performance.now();
    if (left > 1) {
      this.deadlineTimer = setTimeout(() => this.checkDeadline(), left);
      return;
    }
    this.stop('deadline');
  }

  /** The process runs nothing more: the running invocation answers `kind`, the rest are handed back. */
  private stop(kind: 'died' | 'deadline'): void {
    if (!this.stopped) {
      this.stopped = true;
      this.writer.stop();
      if (!this.exited) this.child.kill('SIGKILL');
    }
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = null;
    const entries = this.inFlight.splice(0);
    for (let i = 0; i < entries.length; i++) {
      entries[i].relay?.end();
      const { startedAt, outbound } = entries[i];
      entries[i].resolve(i === 0 && startedAt > 0 ? { kind, logs: [], startedAt, ...(outbound ? { outbound } : {}) } : { kind: 'requeue' });
    }
  }

  /**
   * The running invocation is answered: the next one sent starts now, unless the answer was a failure after
   * which the process runs nothing more (its own timeout, memory, an error): then the process is stopped and
   * the ones behind, never started, are handed back (not failed as if they had been running when it stopped).
   */
  private answered(outcome: RunOutcome, goesOn = true): void {
    const head = this.inFlight.shift()!;
    if (outcome.kind !== 'requeue') {
      outcome.startedAt = head.startedAt;
      if (head.outbound) outcome.outbound = head.outbound;
    }
    head.relay?.end();
    const next = this.inFlight[0];
    if (next && goesOn) this.started(next);
    head.resolve(outcome);
    if (!goesOn) this.stop('died');
  }

  private remember(codeHash: string): void {
    // Bounded like the process's own cache: beyond it, the process asks (`m`) when it forgot one.
    if (this.sentCode.size >= this.options.settings.maxCachedScripts) this.sentCode.clear();
    this.sentCode.add(codeHash);
  }

  private send(frame: string): void {
    if (!this.stopped) this.writer.send(frame);
  }

  /** What the process says is checked as coming from where tenant code runs: a frame out of turn is ignored. */
  private onFrame(frame: string): void {
    const head = this.inFlight[0];
    switch (frame.charAt(0)) {
      case 'd': {
        const f = frameFields(frame, 4);
        if (!f || head?.id !== Number(f[0])) return;
        decodeCounters(f[1], this.counters);
        this.answered({ kind: 'done', outcome: f[3], logs: logsOf(f[2]), startedAt: 0 });
        return;
      }
      case 'f': {
        const f = frameFields(frame, 5);
        if (!f || head?.id !== Number(f[0])) return;
        decodeCounters(f[2], this.counters);
        const failure = FAILURES.has(f[1]) ? (f[1] as FailureKind) : 'error';
        this.answered({ kind: 'failed', failure, message: stringField(f[4]) ?? failure, logs: logsOf(f[3]), startedAt: 0 }, failure === 'load');
        return;
      }
      case 's': {
        const f = frameFields(frame, 3);
        if (!f || head?.id !== Number(f[0])) return;
        const id = head.id;
        head.relay ??= new SvcBridgeRelay(head.run.svc, this.options.settings.maxSvcRequests, (svcId, payload) => this.send(`s\t${id}\t${svcId}\t${payload}`));
        head.relay.request(Number(f[1]), f[2]);
        return;
      }
      case 'o': {
        const f = frameFields(frame, 3);
        if (!f || head?.id !== Number(f[0])) return;
        const ms = Number(f[1]);
        const outcome = OUTBOUND_OUTCOMES.has(f[2]) ? f[2] : 'error';
        head.outbound ??= { requests: 0, ms: 0 };
        // Reported by the process that runs tenant code: counted up to the limit it enforces, and no further.
        if (head.outbound.requests >= this.options.settings.maxOutboundRequests) return;
        const took = Number.isFinite(ms) && ms > 0 ? Math.min(ms, this.options.settings.timeoutMs) : 0;
        // A request refused for the limit never ran: the metric counts it, the run's tally does not.
        if (outcome !== 'limit') {
          head.outbound.requests++;
          head.outbound.ms += took;
        }
        this.options.onOutbound?.(took, outcome);
        return;
      }
      case 'm': {
        const f = frameFields(frame, 1);
        if (!f || head?.id !== Number(f[0])) return;
        this.remember(head.run.codeHash);
        this.send(`k\t${head.id}\t${JSON.stringify(head.run.code)}`);
        return;
      }
      case 'c': {
        const f = frameFields(frame, 1);
        if (f) decodeCounters(f[0], this.counters);
        return;
      }
      case 'x': {
        const f = frameFields(frame, 1);
        this.options.onCatastrophicError((f && stringField(f[0])) ?? 'catastrophic error');
        this.kill();
        return;
      }
      case 'R': {
        const f = frameFields(frame, 1);
        this.readyFrame?.(f ? Number(f[0]) || 0 : 0);
        return;
      }
      default:
        return;
    }
  }

  /**
   * Ready once the process has started its isolate and its address space is capped at what it then
   * was plus the headroom (prlimit on its pid: Node has no setrlimit, and the cap is only known once
   * the process has reserved what V8 and its threads reserve at start).
   */
  private start(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the sandbox process did not start in time')), this.options.startTimeoutMs);
      const fail = (error: Error) => {
        clearTimeout(timer);
        reject(error);
      };
      this.child.once('exit', () => fail(new Error('the sandbox process exited while starting')));
      this.readyFrame = (vmSizeKb) => {
        this.readyFrame = null;
        const capBytes = (vmSizeKb * 1024 || addressSpaceOf(this.child.pid)) + this.options.addressSpaceHeadroomMb * 1024 * 1024;
        execFile('prlimit', ['--pid', String(this.child.pid), `--as=${capBytes}`], (error) => {
          if (error) return fail(new Error(`could not cap the sandbox process's address space (prlimit): ${error.message}`));
          clearTimeout(timer);
          resolve();
        });
      };
    });
  }
}

const FAILURES = new Set<string>(['load', 'timeout', 'memory', 'error']);
const OUTBOUND_OUTCOMES = new Set<string>(['ok', 'refused', 'limit', 'error', 'timeout', 'too_large']);

function logsOf(json: string): string[] {
  if (json === '[]') return [];
  try {
    const logs: unknown = JSON.parse(json);
    return Array.isArray(logs) ? logs.filter((line): line is string => typeof line === 'string') : [];
  } catch {
    return [];
  }
}

function addressSpaceOf(pid: number | undefined): number {
  try {
    const match = /VmSize:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}
