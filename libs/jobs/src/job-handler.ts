import type { JobTraceContext } from './job-trace-context';
import { JobData, JobName, QueueName } from './jobs';

export interface JobContext {
  queue: QueueName;
  /** Unique within the queue; with `timestamp`, it identifies one job for good. */
  id: string;
  /** When the job was added (epoch ms). */
  timestamp: number;
  /** 1 on the first run. */
  attempt: number;
  /** The trace context of the request that added the job, if it was traced (job-trace-context.ts). */
  trace?: JobTraceContext;
}

/** A job that can never succeed (bad payload, unknown name): failed at once with this reason, never retried. */
export class InvalidJobError extends Error {}

/** How long to wait before retrying a job's failed attempt (1-based): doubling from the base, capped. */
export function retryDelayMs(attempt: number, options: { backoffBaseMs: number; backoffMaxMs: number }): number {
  return Math.min(options.backoffBaseMs * 2 ** (attempt - 1), options.backoffMaxMs);
}

/** The code that runs one kind of job; exactly one per JobName, checked when the registry is built. */
export abstract class JobHandler<N extends JobName = JobName> {
  abstract readonly job: N;
  abstract handle(data: JobData[N], context: JobContext): Promise<void>;
}

/** One run of a job, as the code around it (metrics, tracing) sees it. */
export interface JobRun {
  queue: QueueName;
  /** The job's name, or `unknown` for a name no handler takes. */
  name: string;
  context: JobContext;
}

/** Code around every run of a job (times it, traces it); it must call `run` once and return its outcome. */
export type JobRunWrapper = (job: JobRun, run: () => Promise<void>) => Promise<void>;

export class JobHandlerRegistry {
  private readonly byName = new Map<JobName, JobHandler>();
  private readonly wrappers: JobRunWrapper[] = [];

  constructor(handlers: JobHandler[]) {
    for (const handler of handlers) {
      if (this.byName.has(handler.job)) throw new Error(`Two handlers for job '${handler.job}'`);
      this.byName.set(handler.job, handler);
    }
    const missing = Object.values(JobName).filter((name) => !this.byName.has(name));
    if (missing.length > 0) throw new Error(`No handler for job(s) ${missing.join(', ')}`);
  }

  /** Puts code around every run of every job, whichever driver runs it (the metrics, the tracing). */
  wrap(wrapper: JobRunWrapper): void {
    this.wrappers.push(wrapper);
  }

  /** Runs the job's handler; an unknown name is an InvalidJobError (another service's typo lands in the failed set). */
  run(name: string, data: unknown, context: JobContext): Promise<void> {
    const handler = this.byName.get(name as JobName);
    let run = (): Promise<void> =>
      handler ? handler.handle(data as never, context) : Promise.reject(new InvalidJobError(`Unknown job name '${name}' on queue ${context.queue}`));
    if (this.wrappers.length === 0) return run();
    const job: JobRun = { queue: context.queue, name: handler ? name : 'unknown', context };
    for (const wrapper of this.wrappers) {
      const inner = run;
      run = () => wrapper(job, inner);
    }
    return run();
  }
}
