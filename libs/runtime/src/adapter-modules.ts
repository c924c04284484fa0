import { DynamicModule } from '@nestjs/common';
import { Database, PersistenceModule, PersistenceOptions } from '@gatehouse/persistence';
import { BackgroundJobsModule, BackgroundJobsOptions, JobQueueModule } from '@gatehouse/jobs';

/**
 * The persistence and queue adapters wired together, the same way for the api and the worker: the unit of work
 * publishes committed audit events through the queue's publisher, and the jobs (log writing, expiry, the outbox
 * relay) run over the repositories. The adapters never import each other; this is where they meet.
 */
export function persistenceAndJobsModules(
  database: Database,
  persistence: Omit<PersistenceOptions, 'publisher'>,
  jobs: BackgroundJobsOptions,
): DynamicModule[] {
  const queue = JobQueueModule.forRoot(jobs);
  const store = PersistenceModule.forRoot(database, { ...persistence, publisher: queue });
  return [queue, store, BackgroundJobsModule.forRoot(jobs, { queue, persistence: store })];
}
