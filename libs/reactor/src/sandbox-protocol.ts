import type { OutboundSettings } from './outbound-http';

/**
 * The frames between the API process and a sandbox process. Each direction has a pipe of its own
 * (the child's fd 3 from the API, fd 4 to it), carrying one frame per line: a one-letter type and
 * tab-separated fields, the last field taking the rest of the line. A field that may hold a tab or a
 * newline (a tenant id, code, a message) is JSON-encoded; JSON that the sender produced with
 * JSON.stringify (a run's input, an outcome, logs) never holds a raw tab or newline and travels as it
 * is, so neither side wraps JSON in JSON (Node's IPC channel did, escaping every quote on one side and
 * unescaping it on the other). Several frames may come in one read, and one frame over several.
 *
 * To the sandbox process:
 * - `r id svc codeHash tenantJson codeJson input body`: an invocation. `codeJson` is empty when the
 *   process was already sent that code (it answers `m` if it has forgotten it); `svc` is 1 or 0. `body`
 *   is empty, or a body passed as it arrived, which the sandbox makes `args.body`: `j` and JSON text to
 *   parse (the text itself if it does not parse), `t` and text; `J` or `T` and the same text as a JSON
 *   string when it holds a newline. Invocations may be sent before the previous one is answered: the
 *   process runs them one after the other, in the order sent.
 * - `k id codeJson`: the code the process asked for with `m`.
 * - `s id svcId payload`: the answer to a svc request of invocation `id`.
 *
 * From it:
 * - `R vmSizeKb`: started, its first context ready; `vmSizeKb` is its address space then.
 * - `d id counters logsJson outcome`: invocation `id` produced the runtime's JSON outcome; when the input
 *   asked for its body apart (`payload`), the JSON without the body, a tab, and `j` and the body's JSON
 *   or `t` and its string (one without a newline).
 * - `f id kind counters logsJson messageJson`: it did not (see FailureKind).
 * - `m id`: send the code of invocation `id` again (the process evicted it); the invocation waits.
 * - `s id svcId request`: a svc request of invocation `id`.
 * - `o id ms outcome`: invocation `id` finished an outbound request (fetch, http.request) in `ms`; `outcome` as
 *   OutboundOutcome. Sent as each one ends, so a run stopped at its deadline has reported what it did.
 * - `c counters`: counters changed after the last answer. `x messageJson`: V8 lost control of the isolate.
 */

/** Settings a sandbox process starts with, passed in its environment as JSON. */
export interface SandboxProcessSettings extends OutboundSettings {
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
/** The child's end of the pipe from the API process, and of the pipe to it. */
export const FROM_HOST_FD = 3;
export const TO_HOST_FD = 4;

/**
 * Why an invocation did not produce an outcome: `load` (its code does not compile; the process is
 * healthy and goes on with the next), or `timeout`, `memory`, `error` (the process runs nothing more
 * and is replaced).
 */
export type FailureKind = 'load' | 'timeout' | 'memory' | 'error';

/**
 * Counters of one sandbox process, reported with every answer, in this order. `modules*`: bundled modules compiled in
 * the process, those compiled from the build's code cache, and code caches V8 refused (see module-code-cache.ts).
 */
const COUNTERS = [
  'contextsCreated',
  'warmInvocations',
  'compiledScripts',
  'warmContexts',
  'modulesCompiled',
  'modulesFromCodeCache',
  'modulesCodeCacheRejected',
] as const;
export type SandboxCounters = Record<(typeof COUNTERS)[number], number>;

export function newCounters(): SandboxCounters {
  return Object.fromEntries(COUNTERS.map((name) => [name, 0])) as SandboxCounters;
}

export function encodeCounters(c: SandboxCounters): string {
  return COUNTERS.map((name) => c[name]).join(',');
}

/** Reads counters into `into`; a field that is not a count leaves it as it was. */
export function decodeCounters(text: string, into: SandboxCounters): void {
  const values = text.split(',', COUNTERS.length).map(Number);
  COUNTERS.forEach((name, i) => {
    if (Number.isSafeInteger(values[i])) into[name] = values[i]!;
  });
}

/**
 * The fields of a frame after its type letter and tab: `count` of them, the last taking the rest of
 * the line. Null when the frame has fewer.
 */
export function frameFields(frame: string, count: number): string[] | null {
  const fields: string[] = [];
  let start = 2;
  for (let i = 1; i < count; i++) {
    const tab = frame.indexOf('\t', start);
    if (tab === -1) return null;
    fields.push(frame.slice(start, tab));
    start = tab + 1;
  }
  if (start > frame.length) return null;
  fields.push(frame.slice(start));
  return fields;
}

/**
 * Splits what arrives on a pipe into frames (lines). A frame longer than `maxFrameLength` characters
 * is a broken peer: `onOverflow` is called and nothing more is read.
 */
export class FrameReader {
  private readonly parts: string[] = [];
  private partLength = 0;
  private failed = false;

  constructor(
    private readonly maxFrameLength: number,
    private readonly onFrame: (frame: string) => void,
    private readonly onOverflow: () => void,
  ) {}

  push(chunk: string): void {
    if (this.failed) return;
    let start = 0;
    let newline = chunk.indexOf('\n');
    while (newline !== -1) {
      let frame = chunk.slice(start, newline);
      if (this.parts.length > 0) {
        this.parts.push(frame);
        frame = this.parts.join('');
        this.parts.length = 0;
        this.partLength = 0;
      }
      this.onFrame(frame);
      if (this.failed) return;
      start = newline + 1;
      newline = chunk.indexOf('\n', start);
    }
    if (start < chunk.length) {
      this.partLength += chunk.length - start;
      if (this.partLength > this.maxFrameLength) {
        this.failed = true;
        this.parts.length = 0;
        this.onOverflow();
        return;
      }
      this.parts.push(start === 0 ? chunk : chunk.slice(start));
    }
  }

  /** Stops reading (the peer is gone or broken). */
  stop(): void {
    this.failed = true;
    this.parts.length = 0;
  }
}

/**
 * Coalesces the frames sent during one turn of the event loop into one write, made after that turn's I/O
 * callbacks (setImmediate): the invocations started by every request read in that turn leave in one
 * system call and wake the sandbox process once. A write that wakes another process is most of a round
 * trip's price (docs/benchmarks/history.md); flushing per callback (process.nextTick) made one write per
 * frame, as each request's transform starts in a callback of its own.
 */
export class FrameWriter {
  private outgoing = '';
  private scheduled = false;
  private stopped = false;

  constructor(private readonly write: (text: string) => void) {}

  send(frame: string): void {
    if (this.stopped) return;
    this.outgoing += `${frame}\n`;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Nothing more is written, what waits is dropped (the peer is gone). */
  stop(): void {
    this.stopped = true;
    this.outgoing = '';
  }

  private flush(): void {
    this.scheduled = false;
    const text = this.outgoing;
    this.outgoing = '';
    if (!this.stopped && text !== '') this.write(text);
  }
}

/** A JSON-encoded string field, or null when it is not one. */
export function stringField(field: string): string | null {
  try {
    const value: unknown = JSON.parse(field);
    return typeof value === 'string' ? value : null;
  } catch {
    return null;
  }
}
