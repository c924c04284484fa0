import { readFileSync } from 'node:fs';
import { Invocation } from './invocation';
import { MemoryLimitError, MissingCodeError, SandboxIsolate, TransformLoadError } from './sandbox-isolate';
import { SANDBOX_SETTINGS_ENV, type FailureKind, type FromSandbox, type SandboxProcessSettings, type ToSandbox } from './sandbox-protocol';

/**
 * Entry point of a sandbox process (forked by SandboxProcess): one isolate, one invocation at a
 * time, answered over the IPC channel. Nothing here is trusted by the API process, which can stop
 * this process at any instruction and caps its address space.
 */
const settings = JSON.parse(process.env[SANDBOX_SETTINGS_ENV] ?? '{}') as SandboxProcessSettings;

function send(message: FromSandbox): void {
  if (process.connected) process.send!(message);
}

const sandbox = new SandboxIsolate(settings, (message) => {
  send({ t: 'catastrophic', message });
});

let current: { id: number; invocation: Invocation } | null = null;

async function run(message: Extract<ToSandbox, { t: 'run' }>): Promise<void> {
  const { id } = message;
  const forward = message.svc ? (svcId: number, request: string) => send({ t: 'svc', id, svcId, request }) : null;
  const invocation = new Invocation(forward, settings);
  current = { id, invocation };
  try {
    const outcome = await sandbox.execute(invocation, message.tenantId, message.code ?? null, message.codeHash, message.input, message.timeoutMs);
    send({ t: 'done', id, outcome, logs: invocation.logs, counters: sandbox.counters });
  } catch (error) {
    const kind = failureKind(error);
    send({ t: 'failed', id, kind, message: error instanceof TransformLoadError ? error.message : kind, logs: invocation.logs, counters: sandbox.counters });
  } finally {
    invocation.end();
    current = null;
  }
  // After the answer, off the request's path: the next fresh context.
  try {
    if (sandbox.prepare()) send({ t: 'counters', counters: sandbox.counters });
  } catch {
    // A broken isolate: the next run fails and the API process replaces this process.
  }
}

function failureKind(error: unknown): FailureKind {
  if (error instanceof TransformLoadError) return 'load';
  if (error instanceof MissingCodeError) return 'missing';
  if (error instanceof MemoryLimitError) return 'memory';
  const text = (error as { message?: unknown } | null)?.message;
  const message = typeof text === 'string' ? text : '';
  if (/timed out/i.test(message)) return 'timeout';
  if (sandbox.disposed || /memory limit|allocation failed|out of memory/i.test(message)) return 'memory';
  return 'error';
}

process.on('message', (message: ToSandbox) => {
  if (message.t === 'run') {
    if (current) {
      send({ t: 'failed', id: message.id, kind: 'error', message: 'busy', logs: [], counters: sandbox.counters });
      return;
    }
    void run(message);
  } else if (message.t === 'svc' && current?.id === message.id) {
    current.invocation.svcAnswered(message.svcId, message.payload);
  }
});
// The API process is gone: nothing to serve.
process.on('disconnect', () => process.exit(0));

sandbox.prepare();
const vmSize = /VmSize:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'));
send({ t: 'ready', vmSizeKb: vmSize ? Number(vmSize[1]) : 0 });
