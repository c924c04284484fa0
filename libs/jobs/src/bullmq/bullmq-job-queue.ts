import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import { AddJobOptions, JobQueue, QueueDepths, QueueUnavailableError } from '../job-queue';
import { captureTraceContext, toJobTraceMetadata } from '../job-trace-context';
import { JobData, JobName, QUEUE_OF, QueueName } from '../jobs';
import { PRODUCER_TIMEOUT_MS, producerConnection } from './redis-connections';

/**
 * The producer side on BullMQ. Adds fail at once while Redis is not connected and after
 * PRODUCER_TIMEOUT_MS at worst: whatever was not accepted is still in the outbox (logs) or will be
 * found by the sweep (expiries).
 */
export class BullmqJobQueue extends JobQueue {
  readonly redis: IORedis;
  private readonly queues = new Map<QueueName, Queue>();

  constructor(redisUrl: string, prefix: string) {
    super();
    this.redis = producerConnection(redisUrl);
    for (const name of Object.values(QueueName)) {
      const queue = new Queue(name, { connection: this.redis, prefix });
      queue.on('error', () => undefined);
      this.queues.set(name, queue);
    }
  }

  async add<N extends JobName>(name: N, data: JobData[N], options: AddJobOptions = {}): Promise<void> {
    if (this.redis.status !== 'ready') throw new QueueUnavailableError(`Redis is not connected (${this.redis.status})`);
    const queue = this.queues.get(QUEUE_OF[name])!;
    const trace = options.trace === undefined ? captureTraceContext() : options.trace;
    const added = queue.add(name, data as never, {
      jobId: options.jobId,
      delay: options.delayMs,
      // In the options, not the payload (job-trace-context.ts).
      ...(trace ? { telemetry: { metadata: toJobTraceMetadata(trace) } } : {}),
      // Retries are the worker's (with backoff); a job that still fails stays in the failed set.
      removeOnComplete: true,
      removeOnFail: false,
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new QueueUnavailableError(`Redis did not accept the job within ${PRODUCER_TIMEOUT_MS} ms`)), PRODUCER_TIMEOUT_MS);
    });
    try {
      await Promise.race([added, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Jobs per state in each queue, read from Redis (shared by every process using this prefix). */
  async depths(): Promise<QueueDepths> {
    const out: QueueDepths = {};
    for (const [name, queue] of this.queues) {
      out[name] = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
    }
    return out;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
    this.redis.disconnect();
  }
}
