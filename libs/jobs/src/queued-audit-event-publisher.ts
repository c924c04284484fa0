import { Logger } from '@nestjs/common';
import { AuditEvent, AuditEventPublisher, toLogJson } from '@gatehouse/domain';
import { JobQueue } from './job-queue';
import { captureTraceContext, JobTraceContext, mergeTraceContexts } from './job-trace-context';
import { JobName } from './jobs';

export interface PublisherOptions {
  /** Events of concurrent commits gathered into one job, up to this many. */
  maxEventsPerJob: number;
  /**
   * At most one job per this interval unless a job fills up: an event after a quiet spell goes at once,
   * while under load the events of many commits share a job (each job costs the worker and Redis alike).
   */
  minIntervalMs: number;
  /** Beyond this many unsent events, new ones are left to the outbox relay instead of buffered. */
  maxBufferedEvents: number;
  maxJobsInFlight: number;
}

export const DEFAULT_PUBLISHER: PublisherOptions = { maxEventsPerJob: 500, minIntervalMs: 100, maxBufferedEvents: 20_000, maxJobsInFlight: 16 };

const WARN_EVERY_MS = 10_000;

/**
 * Sends committed audit events to the queue at once (within `minIntervalMs` under load), coalescing the
 * commits of concurrent requests into `audit-log-batch` jobs. It never blocks or fails the request that committed: `publish` returns at once,
 * memory is bounded, and an event that cannot be sent stays in the outbox, where the relay finds it.
 */
export class QueuedAuditEventPublisher extends AuditEventPublisher {
  private readonly logger = new Logger('AuditEventPublisher');
  private buffer: AuditEvent[] = [];
  /** The trace context of each buffered event's request (same positions as `buffer`): a batch job joins their traces. */
  private traces: Array<JobTraceContext | undefined> = [];
  private timer?: NodeJS.Timeout;
  private readonly inFlight = new Set<Promise<void>>();
  private unsent = 0;
  private lastWarning = 0;
  private lastFlush = 0;

  constructor(
    private readonly queue: JobQueue,
    private readonly options: PublisherOptions = DEFAULT_PUBLISHER,
  ) {
    super();
  }

  async publish(events: AuditEvent[]): Promise<void> {
    if (this.buffer.length + events.length > this.options.maxBufferedEvents) {
      this.leftToRelay(events.length, 'the publish buffer is full');
      return;
    }
    this.buffer.push(...events);
    const trace = captureTraceContext();
    for (let i = 0; i < events.length; i++) this.traces.push(trace);
    if (this.buffer.length >= this.options.maxEventsPerJob) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), Math.max(0, this.lastFlush + this.options.minIntervalMs - Date.now()));
  }

  /** Sends what is buffered and waits for the adds in flight (each bounded by the queue). */
  async close(): Promise<void> {
    this.flush();
    while (this.inFlight.size > 0) {
      await Promise.allSettled([...this.inFlight]);
      this.flush();
    }
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.lastFlush = Date.now();
    while (this.buffer.length > 0 && this.inFlight.size < this.options.maxJobsInFlight) {
      const chunk = this.buffer.splice(0, this.options.maxEventsPerJob);
      // Explicit, even when none: the timer that flushes runs in the context of whichever request set it.
      const trace = mergeTraceContexts(this.traces.splice(0, chunk.length)) ?? null;
      const sent: Promise<void> = this.queue
        .add(JobName.AuditLogBatch, { logs: chunk.map((event) => toLogJson(event)) }, { trace })
        .catch((error: unknown) => this.leftToRelay(chunk.length, error instanceof Error ? error.message : String(error)))
        .finally(() => {
          this.inFlight.delete(sent);
          if (this.buffer.length > 0) this.flush();
        });
      this.inFlight.add(sent);
    }
  }

  private leftToRelay(count: number, reason: string): void {
    this.unsent += count;
    const now = Date.now();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.logger.warn(`${this.unsent} audit event(s) left in the outbox for the relay: ${reason}`);
    this.unsent = 0;
    this.lastWarning = now;
  }
}
