import { DynamicModule } from '@nestjs/common';
import { AppConfig, resolveVaultKeys } from '@gatehouse/config';
import { KeyWrapper } from '@gatehouse/domain';
import { Database, LocalKeyWrapper, PersistenceModule } from '@gatehouse/persistence';
import { BackgroundJobsModule, BackgroundJobsOptions, backgroundJobsOptions, JobQueueModule } from '@gatehouse/jobs';

export interface AdapterModulesOptions {
  /** Run the jobs in this process: the worker, or the api without Redis (`npm start`). */
  runJobs: boolean;
  /** Tuning beyond the configuration (tests shorten the relay's and the sweep's intervals). */
  jobs?: Partial<BackgroundJobsOptions>;
  /** The vault's key-encryption key; default a LocalKeyWrapper over the configured vault keys. */
  keyWrapper?: KeyWrapper;
}

/**
 * The persistence and jobs adapters wired together from the configuration, in this one place for the api, the worker
 * and the jobs library's tests: the unit of work publishes committed audit events through the queue's publisher, and
 * the jobs (log writing, expiry, the outbox relay, checkpoints) run over the repositories. The adapters never import
 * each other; this is where they meet.
 */
export function persistenceAndJobsModules(database: Database, config: AppConfig, options: AdapterModulesOptions): DynamicModule[] {
  const jobs = backgroundJobsOptions(config, options.runJobs, options.jobs);
  const queue = JobQueueModule.forRoot(jobs);
  // redisUrl: deletions (the worker's expiries too) invalidate every api replica's caches.
  const keyWrapper = options.keyWrapper ?? new LocalKeyWrapper(() => resolveVaultKeys(config));
  const store = PersistenceModule.forRoot(database, { redisUrl: config.redisUrl, keyWrapper, publisher: queue });
  return [queue, store, BackgroundJobsModule.forRoot(jobs, { queue, persistence: store })];
}
