import type { JobHandlerRegistry } from '@gatehouse/jobs';
import { inSpan, tracingEnabled } from './tracing';

/**
 * A span around every run of every job (its database and Redis work nested in it), when tracing is on: a child of
 * the request that added the job when the job carries its context (JobContext.trace), else a trace of its own.
 */
export function traceJobs(registry: JobHandlerRegistry | undefined): void {
  if (!registry || !tracingEnabled()) return;
  registry.wrap((job, run) =>
    inSpan(
      `job ${job.name}`,
      'consumer',
      { 'messaging.destination.name': job.queue, 'gatehouse.job.id': job.context.id, 'gatehouse.job.attempt': job.context.attempt },
      () => run(),
      job.context.trace ?? null,
    ),
  );
}
