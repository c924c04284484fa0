import { DynamicModule, Global, Module, Provider } from '@nestjs/common';
import {
  ApplicationExpiryScheduler,
  ApplicationRepository,
  AuditEventPublisher,
  CheckpointSigner,
  Clock,
  ExpireApplications,
  ExpireTokens,
  IngestLogs,
  LogChainWriter,
  LogCheckpointRepository,
  LogPartitionInterval,
  LogPartitions,
  MaintainLogPartitions,
  NoopApplicationExpiryScheduler,
  RelayAuditOutbox,
  SignLogCheckpoints,
  UnitOfWork,
} from '@gatehouse/domain';
import { BackgroundJobs } from './background-jobs';
import { BullmqJobConsumer } from './bullmq/bullmq-job-consumer';
import { AuditLogBatchHandler, AuditLogHandler } from './handlers/audit-log.handlers';
import { ExpireApplicationHandler } from './handlers/expire-application.handler';
import { JobHandlerRegistry } from './job-handler';
import { QueueDrivers, queuePrefix, retryOptions } from './job-queue.module';
import { QueueName } from './jobs';
import { DEFAULT_LOG_BATCH, LogBatchOptions, LogBatchWriter } from './log-batch-writer';
import { PeriodicTask } from './periodic-task';
import { QueuedApplicationExpiryScheduler } from './queued-application-expiry-scheduler';
import { PublisherOptions, QueuedAuditEventPublisher } from './queued-audit-event-publisher';

export interface BackgroundJobsOptions {
  /** Run the jobs in this process: the worker, or the API when there is no Redis. */
  runJobs: boolean;
  /** BullMQ on this Redis; without it an in-process queue (and the jobs only run where `runJobs`). */
  redisUrl?: string;
  /** Key prefix of the BullMQ queues (default `gatehouse`): keys are `<prefix>:audit-logs:*`. */
  prefix?: string;
  /** False leaves audit events to the outbox relay alone (benchmarks compare the two). Default true. */
  publishAuditEvents?: boolean;
  expirySweepIntervalMs?: number;
  outboxRelayIntervalMs?: number;
  /** An outbox event younger than this is presumed on its way through the queue. */
  outboxRelayMinAgeMs?: number;
  /** Log jobs run at once per worker: the upper bound of rows one flush gathers from single-log jobs. */
  logJobConcurrency?: number;
  logBatch?: Partial<LogBatchOptions>;
  publisher?: Partial<PublisherOptions>;
  retry?: { maxAttempts?: number; backoffBaseMs?: number; backoffMaxMs?: number };
  /** Signs the log chains' heads (where jobs run) and gives the api its public key. */
  checkpointSigner: CheckpointSigner;
  /** How often the chains that grew get a signed checkpoint (default 30 s). */
  checkpointIntervalMs?: number;
  /** LOG_PARTITION_INTERVAL: the logs' time partitions are days, weeks or months (default). */
  logPartitionInterval?: LogPartitionInterval;
  /** How often the partitions ahead are checked and created (default hourly, and at start). */
  logPartitionCheckIntervalMs?: number;
}

/**
 * Expiry scheduling and, where `runJobs`, the jobs themselves (log writing, expiry, the outbox relay, the expiry
 * sweep), shared by the api and the worker. The queue and the audit publisher come from the JobQueueModule and the
 * repositories and unit of work from the PersistenceModule, both passed in `imports` (the runtime's
 * persistenceAndJobsModules wires the three the same way for both apps).
 *
 *   Redis?  runJobs  queue        publisher / scheduler   jobs here
 *   yes     no       BullMQ       to BullMQ               none (the worker runs them)
 *   yes     yes      BullMQ       to BullMQ               BullMQ workers, relay, sweep
 *   no      yes      in-process   to the in-process queue in-process, relay, sweep
 *   no      no       none         outbox only             none (the next process with jobs relays)
 */
@Global()
@Module({})
export class BackgroundJobsModule {
  static forRoot(options: BackgroundJobsOptions, imports: { queue: DynamicModule; persistence: DynamicModule }): DynamicModule {
    const retry = retryOptions(options);
    const logBatch = { ...DEFAULT_LOG_BATCH, ...options.logBatch };
    const prefix = queuePrefix(options);

    const providers: Provider[] = [
      { provide: CheckpointSigner, useValue: options.checkpointSigner },
      {
        provide: ExpireApplications,
        inject: [UnitOfWork, ApplicationRepository, Clock],
        useFactory: (uow: UnitOfWork, apps: ApplicationRepository, clock: Clock) => new ExpireApplications(uow, apps, clock),
      },
      {
        provide: ApplicationExpiryScheduler,
        inject: [QueueDrivers, Clock],
        useFactory: ({ bullmq, inProcess }: QueueDrivers, clock: Clock) => {
          const queue = bullmq ?? inProcess;
          return queue ? new QueuedApplicationExpiryScheduler(queue, clock) : new NoopApplicationExpiryScheduler();
        },
      },
      {
        provide: BackgroundJobs,
        inject: [QueueDrivers, AuditEventPublisher, ApplicationExpiryScheduler, ExpireApplications, LogChainWriter, LogCheckpointRepository, Clock, UnitOfWork, LogPartitions],
        useFactory: (
          { bullmq, inProcess }: QueueDrivers,
          publisher: AuditEventPublisher,
          scheduler: ApplicationExpiryScheduler,
          expire: ExpireApplications,
          logs: LogChainWriter,
          checkpoints: LogCheckpointRepository,
          clock: Clock,
          uow: UnitOfWork,
          partitions: LogPartitions,
        ) => {
          const parts = {
            bullmq,
            inProcess,
            publisher: publisher instanceof QueuedAuditEventPublisher ? publisher : undefined,
            scheduler: scheduler instanceof QueuedApplicationExpiryScheduler ? scheduler : undefined,
          };
          if (!options.runJobs) return new BackgroundJobs(parts);
          const writer = new LogBatchWriter(new IngestLogs(logs), logBatch);
          // Built here, at boot: a job name without exactly one handler stops the process before it takes jobs.
          const registry = new JobHandlerRegistry([
            new AuditLogHandler(writer),
            new AuditLogBatchHandler(writer),
            new ExpireApplicationHandler(expire),
          ]);
          const relay = new RelayAuditOutbox(logs, clock);
          const expireTokens = new ExpireTokens(uow, clock);
          const signCheckpoints = new SignLogCheckpoints(checkpoints, options.checkpointSigner, clock);
          const minAgeMs = options.outboxRelayMinAgeMs ?? 5000;
          const maintainPartitions = new MaintainLogPartitions(partitions, clock, options.logPartitionInterval ?? 'month');
          return new BackgroundJobs({
            ...parts,
            runner: {
              registry,
              writer,
              consumer:
                options.redisUrl === undefined
                  ? undefined
                  : new BullmqJobConsumer(registry, {
                      redisUrl: options.redisUrl,
                      prefix,
                      concurrency: { [QueueName.AuditLogs]: options.logJobConcurrency ?? 500, [QueueName.ApplicationExpiry]: 4 },
                      ...retry,
                    }),
              outboxRelay: new PeriodicTask('OutboxRelay', options.outboxRelayIntervalMs ?? 5000, () => relay.execute(minAgeMs), (n) =>
                `relayed ${n} audit event(s) from the outbox`,
              ),
              checkpoints: new PeriodicTask('LogCheckpoints', options.checkpointIntervalMs ?? 30_000, () => signCheckpoints.execute(), (n) =>
                `signed ${n} log checkpoint(s)`,
              ),
              expirySweep: new PeriodicTask('ExpirySweep', options.expirySweepIntervalMs ?? 15_000, () => expire.sweep(), (n) =>
                `expired ${n} application(s)`,
              ),
              logPartitions: new PeriodicTask('LogPartitions', options.logPartitionCheckIntervalMs ?? 3_600_000, () => maintainPartitions.execute(), (n) =>
                `created ${n} log partition(s) ahead`,
              ),
              tokenExpirySweep: new PeriodicTask('TokenExpirySweep', options.expirySweepIntervalMs ?? 15_000, () => expireTokens.sweep(), (n) =>
                `deleted ${n} expired token(s)`,
              ),
            },
          });
        },
      },
    ];
    return {
      module: BackgroundJobsModule,
      imports: [imports.queue, imports.persistence],
      providers,
      // The queue module re-exported: features find the publisher, the JobQueue and RedisHealth as before.
      exports: [CheckpointSigner, ApplicationExpiryScheduler, ExpireApplications, BackgroundJobs, imports.queue],
    };
  }
}
