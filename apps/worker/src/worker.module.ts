import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig, resolveLogSigningKey, resolveVaultKeys } from '@gatehouse/config';
import { CheckpointSigner, LogStreamDeliveryOptions } from '@gatehouse/domain';
import { Database, LocalKeyWrapper } from '@gatehouse/persistence';
import { BackgroundJobsOptions } from '@gatehouse/jobs';
import { logStreamsModule, persistenceAndJobsModules } from '@gatehouse/runtime';

export interface WorkerModuleOptions {
  config: AppConfig;
  database: Database;
  /** Tuning beyond the configuration (tests shorten the relay's and the sweep's intervals). */
  jobs?: Partial<BackgroundJobsOptions>;
  /** Log stream delivery tuning (tests shorten the backoff and the interval). */
  streams?: Partial<LogStreamDeliveryOptions> & { intervalMs?: number };
}

/** The worker: the same persistence and background-jobs modules as the api, running the jobs, without HTTP. */
@Module({})
export class WorkerModule {
  static register(options: WorkerModuleOptions): DynamicModule {
    const { config } = options;
    return {
      module: WorkerModule,
      imports: [
        // redisUrl: the worker's deletions (expiries) must invalidate the api replicas' caches too.
        ...persistenceAndJobsModules(
          options.database,
          { redisUrl: config.redisUrl, keyWrapper: new LocalKeyWrapper(() => resolveVaultKeys(config)) },
          {
            redisUrl: config.redisUrl,
            prefix: config.queuePrefix,
            checkpointSigner: new CheckpointSigner(() => resolveLogSigningKey(config).key),
            checkpointIntervalMs: config.logCheckpointIntervalMs,
            logPartitionInterval: config.logPartitionInterval,
            ...options.jobs,
            runJobs: true,
          },
        ),
        logStreamsModule(config, options.streams, options.streams?.intervalMs),
      ],
    };
  }
}
