import { Page, PageQuery } from '../../shared/page';
import { Log } from '../log';
import { LogStream, LogStreamStatus } from './log-stream';

/** A delivery attempt's bookkeeping, recorded before the batch leaves (a crash then still counts it). */
export interface SentBatch {
  firstPosition: number;
  lastPosition: number;
}

/**
 * Log streams: their configuration (the management API, in a unit of work) and their delivery state (the worker,
 * under a lease that keeps one worker per stream). Secrets are sealed by the adapter; the port sees them open.
 */
export abstract class LogStreamRepository {
  abstract insert(stream: LogStream): Promise<void>;
  /**
   * Writes the configuration (name, settings, secrets, paused) and never the delivery state; `retryNow` makes a
   * failing stream due at once (new settings, a resume) and forgets its backoff.
   */
  abstract update(stream: LogStream, retryNow: boolean): Promise<boolean>;
  abstract delete(tenantId: string, id: string): Promise<boolean>;
  abstract findById(tenantId: string, id: string): Promise<LogStream | null>;
  abstract list(tenantId: string, page: PageQuery): Promise<Page<LogStream>>;
  abstract count(tenantId: string): Promise<number>;
  /** The tenant's chain head position (0 without logs). */
  abstract headPosition(tenantId: string): Promise<number>;
  /** Each stream with its tenant's chain head and the time of its oldest pending log. */
  abstract status(streams: LogStream[]): Promise<LogStreamStatus[]>;

  /**
   * Leases up to `limit` streams that are due (not paused, past their backoff, behind their tenant's chain head) and
   * not leased by anyone else (or whose lease expired), for `leaseMs`. Never two workers on one stream at once.
   */
  abstract claimDue(owner: string, limit: number, leaseMs: number): Promise<LogStream[]>;
  /** The tenant's committed logs after `position`, in chain order, at most `limit`. */
  abstract readAfter(tenantId: string, position: number, limit: number): Promise<Log[]>;
  /**
   * Records that a batch is about to leave (what of it was sent before is counted as redelivered); returns the
   * position sent up to before it, or null when the lease is no longer ours.
   */
  abstract markSent(streamId: string, owner: string, batch: SentBatch): Promise<number | null>;
  /**
   * The receiver took the logs up to `position`: moves the stream on and renews the lease, and records `next` as sent
   * (as markSent does) in the same statement. Returns what markSent would for `next` (without it, the position sent
   * up to), or null when the lease is lost.
   */
  abstract acknowledge(
    streamId: string,
    owner: string,
    acknowledged: { position: number; count: number },
    leaseMs: number,
    next?: SentBatch,
  ): Promise<number | null>;
  /**
   * A failed attempt: the error (never a secret), the next attempt's time; the lease is released. `sentBefore`: given
   * when the receiver surely took nothing of it (refused connection, an error answer): the position sent up to is put
   * back to what it was before this attempt, so sending the batch again counts as no redelivery.
   */
  abstract recordFailure(streamId: string, owner: string, error: string, retryAt: Date, sentBefore?: number): Promise<void>;
  /** Gives the lease up (the stream is due again at once if still behind). */
  abstract release(streamId: string, owner: string): Promise<void>;
}

/** A failed send of which the receiver surely took nothing: no connection, or an answer refusing the batch. */
export class StreamNotDeliveredError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StreamNotDeliveredError';
  }
}

/**
 * Sends one batch to the stream's receiver; resolves only once the receiver acknowledged all of it. Throws
 * StreamNotDeliveredError when the receiver surely took none of it, any other error when it may have.
 */
export abstract class LogStreamTransport {
  abstract send(stream: LogStream, logs: Log[]): Promise<void>;
  /** Closes the connections it keeps (when the process stops). */
  close(): void {}
}
