import type { JobHandlerRegistry } from '@gatehouse/queue';
import { inSpan, tracingEnabled } from './tracing';

/** A span around every run of every job (its database and Redis work nested in it), when tracing is on. */
export function traceJobs(registry: JobHandlerRegistry | undefined): void {
  if (!registry || !tracingEnabled()) return;
  registry.wrap((job, run) =>
    inSpan(`job ${job.name}`, 'consumer', { 'messaging.destination.name': job.queue, 'gatehouse.job.id': job.context.id, 'gatehouse.job.attempt': job.context.attempt }, () => run()),
  );
}
