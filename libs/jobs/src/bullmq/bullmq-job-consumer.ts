import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Logger } from '@nestjs/common';
import { DelayedError, Job, UnrecoverableError, Worker } from 'bullmq';
import { InvalidJobError, JobHandlerRegistry, retryDelayMs } from '../job-handler';
import { fromJobTraceMetadata } from '../job-trace-context';
import { QueueName } from '../jobs';
import { consumerConnectionOptions } from './redis-connections';

export interface ConsumerOptions {
  redisUrl: string;
  prefix: string;
  concurrency: Record<QueueName, number>;
  /** Runs of a job that keeps failing for a transient reason before it is left in the failed set. */
  maxAttempts: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
}

/**
 * The worker side on BullMQ: one Worker per queue, each job run by its handler. Retries do not depend on
 * the options the producer (maybe another service) set: a transient failure puts the job back as delayed
 * with exponential backoff; a payload that can never work fails at once; both keep their reason.
 */
export class BullmqJobConsumer {
  private readonly logger = new Logger('JobConsumer');
  private readonly workers: Worker[] = [];
  /** Recorded on each job it runs (`processedBy`), to tell which worker process ran what. */
  readonly name = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

  constructor(
    private readonly registry: JobHandlerRegistry,
    private readonly options: ConsumerOptions,
  ) {}

  start(): void {
    for (const queue of Object.values(QueueName)) {
      const worker = new Worker(queue, (job, token) => this.process(queue, job, token), {
        connection: consumerConnectionOptions(this.options.redisUrl),
        name: this.name,
        prefix: this.options.prefix,
        concurrency: this.options.concurrency[queue],
        // Jobs of other services may not say; completed ones are not kept for long, failed ones are.
        removeOnComplete: { count: 1000 },
        maxStalledCount: 5,
      });
      worker.on('error', (error) => this.logger.warn(`${queue}: ${error.message}`));
      worker.on('failed', (job, error) => {
        if (error instanceof DelayedError || error?.name === 'DelayedError') return;
        this.logger.error(`${queue}: job ${job?.name} ${job?.id} failed and stays in the failed set: ${error.message}`);
      });
      this.workers.push(worker);
    }
  }

  private async process(queue: QueueName, job: Job, token?: string): Promise<void> {
    const attempt = Math.max(job.attemptsStarted, 1);
    try {
      const trace = fromJobTraceMetadata(job.opts.telemetry?.metadata);
      await this.registry.run(job.name, job.data, { queue, id: job.id!, timestamp: job.timestamp, attempt, ...(trace ? { trace } : {}) });
    } catch (error) {
      if (error instanceof InvalidJobError) throw new UnrecoverableError(error.message);
      if (attempt >= this.options.maxAttempts || !token) {
        throw new Error(`gave up after ${attempt} attempts: ${error instanceof Error ? error.message : String(error)}`);
      }
      const delay = retryDelayMs(attempt, this.options);
      this.logger.warn(`${queue}: job ${job.name} ${job.id} attempt ${attempt} failed, retrying in ${delay} ms: ${String(error)}`);
      await job.moveToDelayed(Date.now() + delay, token);
      throw new DelayedError();
    }
  }

  /**
   * Stops taking jobs and lets the running ones finish (their logs commit), however long that takes: no job is left
   * active for the stalled-job check to find a minute later. (BullMQ's `close(true)` cannot bound it: once a graceful
   * close is under way it returns that same close.) A stop that must not wait is a kill, whose active jobs the stalled
   * check gives to another worker.
   */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.close()));
  }
}
