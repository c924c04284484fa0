import type { JobTraceContext } from './job-trace-context';
import { JobData, JobName } from './jobs';

export interface AddJobOptions {
  /** Deduplicates: a job with this id that still exists makes the add a no-op. */
  jobId?: string;
  /** Run no earlier than this many milliseconds from now. */
  delayMs?: number;
  /** The trace context the job carries (`null`: none); by default the one active where `add` is called (the request's). */
  trace?: JobTraceContext | null;
}

/** Jobs per state in each queue, for the metrics: `{ 'audit-logs': { waiting: 3, active: 1, ... } }`. */
export type QueueDepths = Record<string, Record<string, number>>;

/** Raised at once when the queue cannot take a job (backend unreachable, buffer full); never after a long wait. */
export class QueueUnavailableError extends Error {}

/**
 * Where jobs are put: BullMQ on Redis, or an in-process queue when there is no Redis. `add` resolves when
 * the job is accepted and rejects within a bounded time otherwise, so a caller on a request path never hangs.
 */
export abstract class JobQueue {
  abstract add<N extends JobName>(name: N, data: JobData[N], options?: AddJobOptions): Promise<void>;
}
