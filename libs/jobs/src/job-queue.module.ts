import { DynamicModule, Module, Provider } from '@nestjs/common';
import { AuditEventPublisher, NoopAuditEventPublisher } from '@gatehouse/domain';
import type { BackgroundJobsOptions } from './background-jobs.module';
import { BullmqJobQueue } from './bullmq/bullmq-job-queue';
import { InProcessJobQueue } from './in-process/in-process-job-queue';
import { JobQueue } from './job-queue';
import { DEFAULT_PUBLISHER, QueuedAuditEventPublisher } from './queued-audit-event-publisher';
import { IoredisHealth, RedisHealth } from './redis-health';

const DEFAULT_QUEUE_PREFIX = 'gatehouse';

/** The queue drivers of this process, for the BackgroundJobsModule that starts and stops them. */
export abstract class QueueDrivers {
  abstract readonly bullmq?: BullmqJobQueue;
  abstract readonly inProcess?: InProcessJobQueue;
}

/** Key prefix of the BullMQ queues: keys are `<prefix>:audit-logs:*`. */
export function queuePrefix(options: BackgroundJobsOptions): string {
  return options.prefix ?? DEFAULT_QUEUE_PREFIX;
}

/** Attempts and backoff of a failing job, the same for both drivers. */
export function retryOptions(options: BackgroundJobsOptions) {
  return { maxAttempts: 12, backoffBaseMs: 1000, backoffMaxMs: 60_000, ...options.retry };
}

/**
 * The producing side of the queue: the queue itself (BullMQ, or the in-process driver where jobs run here), the
 * audit publisher the persistence module's unit of work publishes through, and the Redis health probe. It needs
 * nothing from other modules, so persistence can import it without a cycle.
 */
@Module({})
export class JobQueueModule {
  static forRoot(options: BackgroundJobsOptions): DynamicModule {
    const retry = retryOptions(options);
    const bullmq = options.redisUrl ? new BullmqJobQueue(options.redisUrl, queuePrefix(options)) : undefined;
    const inProcess =
      !bullmq && options.runJobs
        ? new InProcessJobQueue({ maxQueued: 10_000, concurrency: 64, ...retry, backoffBaseMs: Math.min(retry.backoffBaseMs, 200) })
        : undefined;
    const queue: JobQueue | undefined = bullmq ?? inProcess;
    const providers: Provider[] = [
      { provide: QueueDrivers, useValue: { bullmq, inProcess } },
      {
        provide: AuditEventPublisher,
        useFactory: () =>
          queue && options.publishAuditEvents !== false
            ? new QueuedAuditEventPublisher(queue, { ...DEFAULT_PUBLISHER, ...options.publisher })
            : new NoopAuditEventPublisher(),
      },
    ];
    const exports: DynamicModule['exports'] = [QueueDrivers, AuditEventPublisher];
    if (queue) {
      providers.push({ provide: JobQueue, useValue: queue });
      exports.push(JobQueue);
    }
    if (bullmq) {
      providers.push({ provide: RedisHealth, useValue: new IoredisHealth(bullmq.redis) });
      exports.push(RedisHealth);
    }
    return { module: JobQueueModule, providers, exports };
  }
}
