import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '@gatehouse/config';
import { LogStreamDeliveryOptions } from '@gatehouse/domain';
import { Database } from '@gatehouse/persistence';
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
        ...persistenceAndJobsModules(options.database, config, { runJobs: true, jobs: options.jobs }),
        logStreamsModule(config, options.streams, options.streams?.intervalMs),
      ],
    };
  }
}
