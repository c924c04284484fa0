import { readFileSync, writeSync } from 'node:fs';
import { Socket } from 'node:net';
import { Invocation } from './invocation';
import { MemoryLimitError, MissingCodeError, SandboxIsolate, TransformLoadError } from './sandbox-isolate';
import {
  encodeCounters,
  frameFields,
  FrameReader,
  FROM_HOST_FD,
  SANDBOX_SETTINGS_ENV,
  stringField,
  TO_HOST_FD,
  type FailureKind,
  type SandboxProcessSettings,
} from './sandbox-protocol';

/**
 * Entry point of a sandbox process (forked by SandboxProcess): one isolate, running the invocations
 * it is sent one after the other, in the order sent (the API process sends a tenant's next ones
 * before the last is answered, so a busy process never sleeps between runs). Nothing here is trusted
 * by the API process, which can stop this process at any instruction and caps its address space.
 */
const settings = JSON.parse(process.env[SANDBOX_SETTINGS_ENV] ?? '{}') as SandboxProcessSettings;

/**
 * One frame to the API process, written at once (a blocking pipe: an answer never waits behind the
 * next run, and a write is one system call, no stream machinery). The API process gone: so is this one.
 */
function send(frame: string): void {
  const bytes = Buffer.from(`${frame}\n`, 'utf8');
  try {
    for (let offset = 0; offset < bytes.length;) offset += writeSync(TO_HOST_FD, bytes, offset);
  } catch {
    process.exit(0);
  }
}

const sandbox = new SandboxIsolate(settings, (message) => send(`x\t${JSON.stringify(message)}`));

interface Queued {
  id: number;
  svc: boolean;
  codeHash: string;
  tenantId: string | null;
  code: string | null;
  input: string;
  body: string;
}

const queue: Queued[] = [];
let running = false;
/** The invocation whose svc answers are awaited, if it is waiting for any. */
let current: { id: number; invocation: Invocation } | null = null;
/** The invocation waiting for its code (`k`), which is then run first. */
let awaitingCode: Queued | null = null;
/** After a failure that takes the isolate out of service (timeout, memory, error): nothing more runs. */
let broken = false;

function next(): void {
  while (!running && !broken && awaitingCode === null && queue.length > 0) void run(queue.shift()!);
}

async function run(queued: Queued): Promise<void> {
  running = true;
  const { id } = queued;
  const forward = queued.svc ? (svcId: number, request: string) => send(`s\t${id}\t${svcId}\t${request}`) : null;
  const invocation = new Invocation(forward, settings, (ms, outcome) => send(`o\t${id}\t${Math.round(ms)}\t${outcome}`));
  current = { id, invocation };
  try {
    const outcome = await sandbox.execute(invocation, queued.tenantId, queued.code, queued.codeHash, queued.input, queued.body, settings.timeoutMs);
    send(`d\t${id}\t${encodeCounters(sandbox.counters)}\t${JSON.stringify(invocation.logs)}\t${outcome}`);
  } catch (error) {
    if (error instanceof MissingCodeError) {
      awaitingCode = queued;
      send(`m\t${id}`);
    } else {
      const kind = failureKind(error);
      if (kind !== 'load') broken = true;
      const message = JSON.stringify(error instanceof TransformLoadError ? error.message : kind);
      send(`f\t${id}\t${kind}\t${encodeCounters(sandbox.counters)}\t${JSON.stringify(invocation.logs)}\t${message}`);
    }
  } finally {
    invocation.end();
    current = null;
    running = false;
  }
  // After the answer: the next fresh context, if this run used the last one.
  try {
    if (!broken && sandbox.prepare()) send(`c\t${encodeCounters(sandbox.counters)}`);
  } catch {
    // A broken isolate: the next run fails and the API process replaces this process.
  }
  next();
}

function failureKind(error: unknown): FailureKind {
  if (error instanceof TransformLoadError) return 'load';
  if (error instanceof MemoryLimitError) return 'memory';
  const text = (error as { message?: unknown } | null)?.message;
  const message = typeof text === 'string' ? text : '';
  if (/timed out/i.test(message)) return 'timeout';
  if (sandbox.disposed || /memory limit|allocation failed|out of memory/i.test(message)) return 'memory';
  return 'error';
}

function onFrame(frame: string): void {
  switch (frame.charAt(0)) {
    case 'r': {
      const f = frameFields(frame, 7);
      if (!f) return;
      const code = f[4] === '' ? null : stringField(f[4]);
      queue.push({ id: Number(f[0]), svc: f[1] === '1', codeHash: f[2], tenantId: stringField(f[3]), code, input: f[5], body: f[6] });
      next();
      return;
    }
    case 's': {
      const f = frameFields(frame, 3);
      if (f && current?.id === Number(f[0])) current.invocation.svcAnswered(Number(f[1]), f[2]);
      return;
    }
    case 'k': {
      const f = frameFields(frame, 2);
      const waiting = awaitingCode;
      if (!f || waiting === null || waiting.id !== Number(f[0])) return;
      awaitingCode = null;
      waiting.code = stringField(f[1]);
      if (!running && !broken) void run(waiting);
      return;
    }
    default:
      return;
  }
}

// Frames from the API process are trusted (it is the one that can kill this process); still bounded.
const reader = new FrameReader(settings.maxResultLength * 2 + 1024 * 1024, onFrame, () => process.exit(1));
const input = new Socket({ fd: FROM_HOST_FD, readable: true, writable: false });
input.setEncoding('utf8');
input.on('data', (chunk: string) => reader.push(chunk));
// The API process is gone: nothing to serve.
input.on('end', () => process.exit(0));
input.on('error', () => process.exit(0));

sandbox.prepare();
const vmSize = /VmSize:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'));
send(`R\t${vmSize ? Number(vmSize[1]) : 0}`);
