import { Clock } from '../../shared/clock';
import { newId } from '../../shared/ids';
import { LogStream } from './log-stream';
import { Log } from '../log';
import { LogStreamRepository, LogStreamTransport, SentBatch, StreamNotDeliveredError } from './log-stream.repository';

export interface LogStreamDeliveryOptions {
  /** Streams delivered at once by this process (each under its own lease). */
  concurrency: number;
  /** How long a lease lasts without an acknowledgement renewing it; another worker takes the stream after that. */
  leaseMs: number;
  /** The backoff after a failed attempt: base doubled per consecutive failure, at most max. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** How long one run keeps a stream before giving others their turn. */
  runBudgetMs: number;
}

export const DEFAULT_LOG_STREAM_DELIVERY: LogStreamDeliveryOptions = {
  concurrency: 4,
  leaseMs: 30_000,
  backoffBaseMs: 1000,
  backoffMaxMs: 60_000,
  runBudgetMs: 10_000,
};

/** Delay before the attempt after `failures` consecutive failures (1, 2, 4, ... times the base, capped). */
export function streamBackoffMs(failures: number, options: Pick<LogStreamDeliveryOptions, 'backoffBaseMs' | 'backoffMaxMs'>): number {
  return Math.min(options.backoffMaxMs, options.backoffBaseMs * 2 ** Math.min(Math.max(failures - 1, 0), 30));
}

/** What a transport error says, cut short; transports never put a secret in their errors. */
function describe(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}

/**
 * Delivers every due stream's logs, at least once and in chain order: lease the stream, read the logs after its
 * acknowledged position, record the batch as sent, send it, and only once the receiver acknowledged it move the
 * position on. A crash anywhere sends the unacknowledged batch again (counted as redelivered); a failure backs off.
 * It reads committed logs by position, so it never holds up their writing.
 */
export class DeliverLogStreams {
  /** This process's lease owner id. */
  readonly owner = newId();

  constructor(
    private readonly repo: LogStreamRepository,
    private readonly transport: LogStreamTransport,
    private readonly clock: Clock,
    private readonly options: LogStreamDeliveryOptions = DEFAULT_LOG_STREAM_DELIVERY,
  ) {}

  /** Closes the connections the transport keeps (once the runs have stopped). */
  close(): void {
    this.transport.close();
  }

  /** One run: claims due streams until none is left or the budget is spent; returns the logs acknowledged. */
  async execute(): Promise<number> {
    const until = this.clock.now().getTime() + this.options.runBudgetMs;
    let delivered = 0;
    for (;;) {
      const streams = await this.repo.claimDue(this.owner, this.options.concurrency, this.options.leaseMs);
      if (streams.length === 0) return delivered;
      // Every turn settled before the next claim (or the run's end), even when one failed: a lease of this owner is
      // then never in use when a claim takes it back.
      const turns = await Promise.allSettled(streams.map((s) => this.deliver(s, until)));
      for (const turn of turns) if (turn.status === 'fulfilled') delivered += turn.value;
      const failed = turns.find((turn) => turn.status === 'rejected');
      if (failed) throw failed.reason;
      if (this.clock.now().getTime() >= until) return delivered;
    }
  }

  /**
   * One stream's turn. Sends never overlap (chain order); the next batch is read while one is in flight, and each
   * acknowledgement records the next batch as sent in the same statement: a read and an update per batch.
   */
  private async deliver(stream: LogStream, until: number): Promise<number> {
    let delivered = 0;
    const batchSize = Number(stream.settings.batch_size ?? 500);
    const read = (after: number) => this.repo.readAfter(stream.tenantId, after, batchSize);
    let sentBefore: number | undefined;
    try {
      let logs = await read(stream.position);
      let sent = logs.length === 0 ? null : await this.repo.markSent(stream.id, this.owner, range(logs));
      while (sent !== null) {
        sentBefore = sent;
        const last = logs[logs.length - 1]!.position;
        const more = logs.length === batchSize && this.clock.now().getTime() < until;
        const reading = more ? read(last) : Promise.resolve([]);
        reading.catch(() => undefined); // awaited below; a failed send must not leave it unhandled
        await this.transport.send(stream, logs);
        const next = await reading;
        sent = await this.repo.acknowledge(
          stream.id,
          this.owner,
          { position: last, count: logs.length },
          this.options.leaseMs,
          next.length > 0 ? range(next) : undefined,
        );
        if (sent === null) return delivered; // the lease is lost: whoever has it now goes on
        delivered += logs.length;
        if (next.length === 0) break;
        logs = next;
      }
      if (logs.length === 0 || sent !== null) await this.repo.release(stream.id, this.owner);
    } catch (error) {
      const retryAt = new Date(this.clock.now().getTime() + streamBackoffMs(stream.failures + 1, this.options));
      // A batch the receiver surely did not take puts the position sent up to back to what it was before.
      const before = error instanceof StreamNotDeliveredError ? sentBefore : undefined;
      await this.repo.recordFailure(stream.id, this.owner, describe(error), retryAt, before);
    }
    return delivered;
  }
}

function range(logs: Log[]): SentBatch {
  return { firstPosition: logs[0]!.position, lastPosition: logs[logs.length - 1]!.position };
}
