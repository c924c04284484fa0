import { DynamicModule, Module, Provider } from '@nestjs/common';
import { AuditEventPublisher, NoopAuditEventPublisher } from '@gatehouse/domain';
import { BullmqJobQueue } from './bullmq/bullmq-job-queue';
import { InProcessJobQueue } from './in-process/in-process-job-queue';
import { JobQueue } from './job-queue';
import { DEFAULT_PUBLISHER, QueuedAuditEventPublisher } from './queued-audit-event-publisher';
import { BackgroundJobsOptions, QueueDrivers, queuePrefix, retryOptions } from './jobs-options';
import { IoredisHealth, RedisHealth } from './redis-health';

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
