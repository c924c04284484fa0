import { execFile, fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SvcRelay } from './svc-relay';
import {
  SANDBOX_SETTINGS_ENV,
  type FailureKind,
  type FromSandbox,
  type SandboxCounters,
  type SandboxProcessSettings,
  type ToSandbox,
} from './sandbox-protocol';
import type { SvcBridge } from './transform-types';

export interface SandboxProcessOptions {
  settings: SandboxProcessSettings;
  /** Address space allowed beyond what the process had once started (see start()). */
  addressSpaceHeadroomMb: number;
  /** Longest a process may take to start before it counts as failed. */
  startTimeoutMs: number;
  onCatastrophicError(message: string): void;
}

export interface SandboxRun {
  tenantId: string | null;
  code: string;
  codeHash: string;
  inputJson: string;
  svc: SvcBridge | undefined;
  timeoutMs: number;
}

export type RunOutcome =
  | { kind: 'done'; outcome: string; logs: string[] }
  | { kind: 'failed'; failure: FailureKind; message: string; logs: string[] }
  /** Stopped at its deadline by this process (the sandbox process is killed). */
  | { kind: 'deadline'; logs: string[] }
  /** The sandbox process died during the run (its address-space cap, a crash, V8 losing control). */
  | { kind: 'died'; logs: string[] };

/** The entry of a sandbox process, and how to run it: compiled, or from the TypeScript sources under Jest. */
function childEntry(): { module: string; execArgv: string[] } {
  const execArgv = ['--no-node-snapshot', '--disable-warning=ExperimentalWarning'];
  if (__filename.endsWith('.js')) return { module: join(__dirname, 'sandbox-child.js'), execArgv };
  return { module: join(__dirname, 'sandbox-child.ts'), execArgv: [...execArgv, '--require', join(__dirname, '..', 'test', 'support', 'register-ts.js')] };
}

let nextRunId = 1;

/**
 * One sandbox process, seen from the API process. The process holds one isolate and runs one
 * invocation at a time; the API process can stop it at any instruction (SIGKILL), and its address
 * space is capped by the kernel (RLIMIT_AS, set with prlimit once it has started, before it gets any
 * work): whatever a transform allocates, inside V8's heap or outside it (array buffers, resizable or
 * not, flattened strings), the process can grow by at most `addressSpaceHeadroomMb`, and beyond that
 * its allocations fail or it dies, never the API process.
 */
export class SandboxProcess {
  private readonly child: ChildProcess;
  private current: {
    id: number;
    run: SandboxRun;
    relay: SvcRelay;
    timer: NodeJS.Timeout;
    settle(outcome: RunOutcome): void;
  } | null = null;
  /** Code hashes sent to the process; it may have evicted some since (it then asks again). */
  private readonly sentCode = new Set<string>();
  private exited = false;
  private readonly exitedPromise: Promise<void>;
  readonly ready: Promise<void>;
  counters: SandboxCounters = { contextsCreated: 0, warmInvocations: 0, compiledScripts: 0, warmContexts: 0 };

  constructor(private readonly options: SandboxProcessOptions) {
    const entry = childEntry();
    this.child = fork(entry.module, [], {
      execArgv: entry.execArgv,
      // Nothing of the service's environment (database URL, secrets) reaches the sandbox. One malloc
      // arena per thread would reserve 64 MiB of address space each: two keep the cap meaningful.
      env: { [SANDBOX_SETTINGS_ENV]: JSON.stringify(options.settings), MALLOC_ARENA_MAX: '2' },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'json',
    });
    this.exitedPromise = new Promise((resolve) => this.child.once('exit', () => resolve()));
    this.child.once('exit', () => {
      this.exited = true;
      this.current?.settle({ kind: 'died', logs: [] });
    });
    // An IPC write to a process that just died: its exit is handled above.
    this.child.on('error', () => undefined);
    this.ready = this.start();
    this.ready.catch(() => this.kill());
    this.child.on('message', (message: FromSandbox) => this.onMessage(message));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return !this.exited;
  }

  /** Runs one invocation; never rejects. Only one at a time (the pool sees to it). */
  run(run: SandboxRun): Promise<RunOutcome> {
    if (this.exited) return Promise.resolve({ kind: 'died', logs: [] });
    return new Promise<RunOutcome>((resolve) => {
      const id = nextRunId++;
      const relay = new SvcRelay(run.svc, this.options.settings.maxSvcRequests, (svcId, payload) =>
        this.send({ t: 'svc', id, svcId, payload }),
      );
      const settle = (outcome: RunOutcome) => {
        if (this.current?.id !== id) return;
        clearTimeout(this.current.timer);
        relay.end();
        this.current = null;
        resolve(outcome);
      };
      // The host's deadline, whatever the sandbox is doing (a loop, a long builtin call, an await):
      // answered now, and the process is stopped now.
      const timer = setTimeout(() => {
        settle({ kind: 'deadline', logs: [] });
        this.kill();
      }, run.timeoutMs);
      this.current = { id, run, relay, timer, settle };
      this.sendRun(id, run, !this.sentCode.has(run.codeHash));
    });
  }

  kill(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }

  /** Resolves once the process has exited. */
  exitedOnce(): Promise<void> {
    return this.exitedPromise;
  }

  private sendRun(id: number, run: SandboxRun, withCode: boolean): void {
    if (withCode) {
      // Bounded like the process's own cache: beyond it, the process answers `missing` when it forgot one.
      if (this.sentCode.size >= this.options.settings.maxCachedScripts) this.sentCode.clear();
      this.sentCode.add(run.codeHash);
    }
    this.send({
      t: 'run',
      id,
      tenantId: run.tenantId,
      codeHash: run.codeHash,
      code: withCode ? run.code : undefined,
      input: run.inputJson,
      timeoutMs: run.timeoutMs,
      svc: run.svc !== undefined,
    });
  }

  private send(message: ToSandbox): void {
    if (!this.exited && this.child.connected) this.child.send(message);
  }

  private onMessage(message: FromSandbox): void {
    const current = this.current;
    switch (message.t) {
      case 'svc':
        if (current?.id === message.id) current.relay.request(message.svcId, message.request);
        return;
      case 'done':
        this.counters = message.counters;
        if (current?.id === message.id) current.settle({ kind: 'done', outcome: message.outcome, logs: message.logs });
        return;
      case 'failed':
        this.counters = message.counters;
        if (current?.id !== message.id) return;
        if (message.kind === 'missing') {
          this.sendRun(message.id, current.run, true);
          return;
        }
        current.settle({ kind: 'failed', failure: message.kind, message: message.message, logs: message.logs });
        return;
      case 'counters':
        this.counters = message.counters;
        return;
      case 'catastrophic':
        this.options.onCatastrophicError(message.message);
        this.kill();
        return;
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
      const onReady = (message: FromSandbox) => {
        if (message.t !== 'ready') return;
        this.child.off('message', onReady);
        const capBytes = (message.vmSizeKb * 1024 || addressSpaceOf(this.child.pid)) + this.options.addressSpaceHeadroomMb * 1024 * 1024;
        execFile('prlimit', ['--pid', String(this.child.pid), `--as=${capBytes}`], (error) => {
          if (error) return fail(new Error(`could not cap the sandbox process's address space (prlimit): ${error.message}`));
          clearTimeout(timer);
          resolve();
        });
      };
      this.child.on('message', onReady);
    });
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
