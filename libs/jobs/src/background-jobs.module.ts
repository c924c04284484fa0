import { DynamicModule, Global, Module, Provider } from '@nestjs/common';
import {
  ApplicationExpiryScheduler,
  ApplicationRepository,
  ApplyLogRetention,
  AuditEventPublisher,
  CheckpointSigner,
  Clock,
  DropExpiredLogPartitions,
  ExpireApplications,
  ExpireTokens,
  IngestLogs,
  LogChainWriter,
  LogCheckpointRepository,
  LogPartitions,
  LogRetentionRepository,
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
import { BackgroundJobsOptions, QueueDrivers, queuePrefix, retryOptions } from './jobs-options';
import { QueueName } from './jobs';
import { DEFAULT_LOG_BATCH, LogBatchWriter } from './log-batch-writer';
import { PeriodicTask } from './periodic-task';
import { QueuedApplicationExpiryScheduler } from './queued-application-expiry-scheduler';
import { QueuedAuditEventPublisher } from './queued-audit-event-publisher';

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
      // The use cases the jobs run, over the persistence module's ports.
      {
        provide: ExpireApplications,
        inject: [UnitOfWork, ApplicationRepository, Clock],
        useFactory: (uow: UnitOfWork, apps: ApplicationRepository, clock: Clock) => new ExpireApplications(uow, apps, clock),
      },
      { provide: ExpireTokens, inject: [UnitOfWork, Clock], useFactory: (uow: UnitOfWork, clock: Clock) => new ExpireTokens(uow, clock) },
      { provide: IngestLogs, inject: [LogChainWriter], useFactory: (logs: LogChainWriter) => new IngestLogs(logs) },
      { provide: RelayAuditOutbox, inject: [LogChainWriter, Clock], useFactory: (logs: LogChainWriter, clock: Clock) => new RelayAuditOutbox(logs, clock) },
      {
        provide: SignLogCheckpoints,
        inject: [LogCheckpointRepository, CheckpointSigner, Clock],
        useFactory: (checkpoints: LogCheckpointRepository, signer: CheckpointSigner, clock: Clock) => new SignLogCheckpoints(checkpoints, signer, clock),
      },
      {
        provide: ApplyLogRetention,
        inject: [UnitOfWork, LogRetentionRepository, CheckpointSigner, Clock],
        useFactory: (uow: UnitOfWork, retention: LogRetentionRepository, signer: CheckpointSigner, clock: Clock) => {
          const days = options.logRetentionDays;
          return new ApplyLogRetention(
            uow,
            retention,
            signer,
            clock,
            days,
            days === undefined ? undefined : new DropExpiredLogPartitions(uow, signer, clock, days),
          );
        },
      },
      {
        provide: MaintainLogPartitions,
        inject: [LogPartitions, Clock],
        useFactory: (partitions: LogPartitions, clock: Clock) => new MaintainLogPartitions(partitions, clock, options.logPartitionInterval ?? 'month'),
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
        inject: [
          QueueDrivers,
          AuditEventPublisher,
          ApplicationExpiryScheduler,
          ExpireApplications,
          ExpireTokens,
          IngestLogs,
          RelayAuditOutbox,
          SignLogCheckpoints,
          MaintainLogPartitions,
          ApplyLogRetention,
        ],
        useFactory: (
          { bullmq, inProcess }: QueueDrivers,
          publisher: AuditEventPublisher,
          scheduler: ApplicationExpiryScheduler,
          expire: ExpireApplications,
          expireTokens: ExpireTokens,
          ingest: IngestLogs,
          relay: RelayAuditOutbox,
          signCheckpoints: SignLogCheckpoints,
          maintainPartitions: MaintainLogPartitions,
          applyRetention: ApplyLogRetention,
        ) => {
          const parts = {
            bullmq,
            inProcess,
            publisher: publisher instanceof QueuedAuditEventPublisher ? publisher : undefined,
            scheduler: scheduler instanceof QueuedApplicationExpiryScheduler ? scheduler : undefined,
          };
          if (!options.runJobs) return new BackgroundJobs(parts);
          const writer = new LogBatchWriter(ingest, logBatch);
          // Built here, at boot: a job name without exactly one handler stops the process before it takes jobs.
          const registry = new JobHandlerRegistry([new AuditLogHandler(writer), new AuditLogBatchHandler(writer), new ExpireApplicationHandler(expire)]);
          const minAgeMs = options.outboxRelayMinAgeMs ?? 5000;
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
              outboxRelay: new PeriodicTask(
                'OutboxRelay',
                options.outboxRelayIntervalMs ?? 5000,
                () => relay.execute(minAgeMs),
                (n) => `relayed ${n} audit event(s) from the outbox`,
              ),
              checkpoints: new PeriodicTask(
                'LogCheckpoints',
                options.checkpointIntervalMs ?? 30_000,
                () => signCheckpoints.execute(),
                (n) => `signed ${n} log checkpoint(s)`,
              ),
              expirySweep: new PeriodicTask(
                'ExpirySweep',
                options.expirySweepIntervalMs ?? 15_000,
                () => expire.sweep(),
                (n) => `expired ${n} application(s)`,
              ),
              logPartitions: new PeriodicTask(
                'LogPartitions',
                options.logPartitionCheckIntervalMs ?? 3_600_000,
                () => maintainPartitions.execute(),
                (n) => `created ${n} log partition(s) ahead`,
              ),
              tokenExpirySweep: new PeriodicTask(
                'TokenExpirySweep',
                options.expirySweepIntervalMs ?? 15_000,
                () => expireTokens.sweep(),
                (n) => `deleted ${n} expired token(s)`,
              ),
              logRetention: new PeriodicTask(
                'LogRetention',
                options.retentionIntervalMs ?? 600_000,
                () => applyRetention.execute(),
                (n) => `removed ${n} log(s) past their tenant's retention period`,
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
