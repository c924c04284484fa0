import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { DestinationError } from './proxy-failures';

/** The head of a destination's answer. */
export interface DestinationHead {
  statusCode: number;
  headers: IncomingHttpHeaders;
}

/**
 * One exchange with a destination as an undici dispatch handler: the answer's bytes go where they are needed as undici
 * parses them, with no Readable in between (undici's `request` wraps every body in one, which the data plane then
 * piped or read: listeners, buffering and ticks per request for bodies that usually arrive in the head's read).
 * `onHead` is called with the head (a 1xx is skipped) before any byte of the body is handled, synchronously: the first
 * chunk often comes in the same read. Settles once: `done(error)` before the head is in (a DestinationError when the
 * destination failed, `onHead`'s own error when it threw), or `done()` at the point each subclass says.
 */
abstract class DestinationHandler implements Dispatcher.DispatchHandler {
  private settled = false;
  protected controller: Dispatcher.DispatchController | null = null;
  protected head: DestinationHead | null = null;

  constructor(
    private readonly onHead: (head: DestinationHead) => void,
    private readonly done: (error?: unknown) => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200 || this.settled) return;
    const head = { statusCode, headers };
    try {
      this.onHead(head);
    } catch (error) {
      this.settle(error);
      controller.abort(error as Error);
      return;
    }
    this.head = head;
    this.started(controller);
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    if (this.head && this.afterHead()) return;
    this.settle(new DestinationError(error));
  }

  protected settle(error?: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.done(error);
  }

  /** The head was handed over. */
  protected abstract started(controller: Dispatcher.DispatchController): void;
  /** The destination failed once the head was handed over; true when handled (the promise settled already). */
  protected abstract afterHead(): boolean;
}

/**
 * The answer streamed to the client: `onHead` sets `res`'s status and headers, each chunk is written as it arrives
 * (the destination paused while `res` is full), and the end ends `res`, so a body that came with its head leaves with
 * the response head in one write. Settles when the head is handed over. Afterwards, a destination that fails cuts the
 * client's response (as a broken pipe would), and a client that goes away aborts the destination's answer.
 */
class StreamingHandler extends DestinationHandler {
  constructor(
    private readonly res: ServerResponse,
    onHead: (head: DestinationHead) => void,
    done: (error?: unknown) => void,
  ) {
    super(onHead, done);
  }

  protected started(controller: Dispatcher.DispatchController): void {
    this.res.once('close', () => {
      if (!this.res.writableFinished) controller.abort(new Error('The client went away'));
    });
    this.settle();
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.res.write(chunk) || controller.paused) return;
    controller.pause();
    this.res.once('drain', () => controller.resume());
  }

  onResponseEnd(): void {
    this.res.end();
  }

  protected afterHead(): boolean {
    this.res.destroy();
    return true;
  }
}

/** The whole answer in memory, at most `limit` bytes (beyond: `tooLarge()`, and the answer is aborted). */
class BufferingHandler extends DestinationHandler {
  private readonly chunks: Buffer[] = [];
  private length = 0;

  constructor(
    private readonly limit: number,
    private readonly tooLarge: () => Error,
    onHead: (head: DestinationHead) => void,
    private readonly whole: (body: Buffer) => void,
    done: (error?: unknown) => void,
  ) {
    super(onHead, done);
  }

  protected started(): void {}

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.length += chunk.length;
    if (this.length <= this.limit) {
      this.chunks.push(chunk);
      return;
    }
    const error = this.tooLarge();
    this.settle(error);
    controller.abort(error);
  }

  onResponseEnd(): void {
    this.whole(this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.length));
    this.settle();
  }

  protected afterHead(): boolean {
    return false;
  }
}

/** Dispatches `options` with the answer streamed into `res` (StreamingHandler); resolves once the head is handed over. */
export function streamToClient(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  res: ServerResponse,
  onHead: (head: DestinationHead) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    dispatcher.dispatch(options, new StreamingHandler(res, onHead, (error) => (error === undefined ? resolve() : reject(error))));
  });
}

/** Dispatches `options` and resolves to the whole answer, bounded (BufferingHandler). */
export function readWhole(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  limit: number,
  tooLarge: () => Error,
  onHead: (head: DestinationHead) => void,
): Promise<DestinationHead & { body: Buffer }> {
  return new Promise((resolve, reject) => {
    let head: DestinationHead;
    let body: Buffer;
    const handler = new BufferingHandler(
      limit,
      tooLarge,
      (h) => {
        head = h;
        onHead(h);
      },
      (b) => (body = b),
      (error) => (error === undefined ? resolve({ ...head, body }) : reject(error)),
    );
    dispatcher.dispatch(options, handler);
  });
}
