import { Logger } from '@nestjs/common';
import { InvalidJobError, JobContext, JobHandlerRegistry, retryDelayMs } from '../job-handler';
import { AddJobOptions, JobQueue, QueueDepths, QueueUnavailableError } from '../job-queue';
import { captureTraceContext } from '../job-trace-context';
import { JobData, JobName, QUEUE_OF } from '../jobs';

export interface InProcessQueueOptions {
  /** Jobs waiting to run; beyond it `add` refuses (the outbox relay and the sweep cover what was refused). */
  maxQueued: number;
  concurrency: number;
  maxAttempts: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
}

interface QueuedJob {
  name: JobName;
  data: unknown;
  context: JobContext;
}

export interface FailedJob {
  name: JobName;
  data: unknown;
  reason: string;
  failedAt: Date;
}

const MAX_FAILED_KEPT = 1000;
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The queue when there is no Redis (`npm start`): the same jobs and handlers, run in this process with
 * the same retry policy. Nothing survives a restart here; the outbox relay and the expiry sweep, which run
 * at start, cover what was queued when the process stopped.
 */
export class InProcessJobQueue extends JobQueue {
  private readonly logger = new Logger('InProcessJobQueue');
  private readonly waiting: QueuedJob[] = [];
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private registry?: JobHandlerRegistry;
  private running = 0;
  private sequence = 0;
  private closed = false;
  private idle?: () => void;
  /** Jobs that failed for good, newest last (also logged): the failed set of this driver. */
  readonly failed: FailedJob[] = [];

  constructor(private readonly options: InProcessQueueOptions) {
    super();
  }

  async add<N extends JobName>(name: N, data: JobData[N], options: AddJobOptions = {}): Promise<void> {
    if (this.closed) throw new QueueUnavailableError('The in-process queue is closed');
    const id = options.jobId ?? String(++this.sequence);
    if (options.jobId !== undefined && this.timers.has(id)) return;
    const trace = options.trace === undefined ? captureTraceContext() : options.trace;
    const job: QueuedJob = { name, data, context: { queue: QUEUE_OF[name], id, timestamp: Date.now(), attempt: 1, ...(trace ? { trace } : {}) } };
    if (options.delayMs && options.delayMs > 0) {
      this.later(id, Math.min(options.delayMs, MAX_TIMER_MS), job);
      return;
    }
    if (this.waiting.length >= this.options.maxQueued) throw new QueueUnavailableError('The in-process queue is full');
    this.waiting.push(job);
    this.pump();
  }

  /** This process's jobs by state (one figure for all queues: they share the process). */
  depths(): QueueDepths {
    return { 'in-process': { waiting: this.waiting.length, active: this.running, delayed: this.timers.size, failed: this.failed.length } };
  }

  /** Starts running jobs (those added before wait until now). */
  start(registry: JobHandlerRegistry): void {
    this.registry = registry;
    this.pump();
  }

  /** Refuses new jobs, drops the delayed ones (the sweep finds them after a restart) and waits for the rest. */
  async close(timeoutMs = 10_000): Promise<void> {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    if (!this.registry || (this.running === 0 && this.waiting.length === 0)) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([new Promise<void>((resolve) => (this.idle = resolve)), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  }

  private later(id: string, delayMs: number, job: QueuedJob): void {
    const timer = setTimeout(() => {
      this.timers.delete(id);
      this.waiting.push(job);
      this.pump();
    }, delayMs);
    timer.unref();
    this.timers.set(id, timer);
  }

  private pump(): void {
    while (this.registry && this.running < this.options.concurrency && this.waiting.length > 0) {
      const job = this.waiting.shift()!;
      this.running++;
      void this.run(this.registry, job).finally(() => {
        this.running--;
        this.pump();
        if (this.running === 0 && this.waiting.length === 0) this.idle?.();
      });
    }
  }

  private async run(registry: JobHandlerRegistry, job: QueuedJob): Promise<void> {
    try {
      await registry.run(job.name, job.data, job.context);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const attempt = job.context.attempt;
      if (error instanceof InvalidJobError || attempt >= this.options.maxAttempts || this.closed) {
        this.failed.push({ name: job.name, data: job.data, reason, failedAt: new Date() });
        if (this.failed.length > MAX_FAILED_KEPT) this.failed.shift();
        this.logger.error(`job ${job.name} ${job.context.id} failed after ${attempt} attempt(s): ${reason}`);
        return;
      }
      const delay = retryDelayMs(attempt, this.options);
      this.logger.warn(`job ${job.name} ${job.context.id} attempt ${attempt} failed, retrying in ${delay} ms: ${reason}`);
      const retry = { ...job, context: { ...job.context, attempt: attempt + 1 } };
      this.later(`retry:${job.context.id}:${attempt}`, delay, retry);
    }
  }
}
