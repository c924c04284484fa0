import { AuditEvent, DomainError, FieldErrors, LogIdConflictError } from '@gatehouse/domain';
import { LogEntryDefaults, parseLogEntry } from '../log-entry-payload';
import { InvalidJobError, JobContext, JobHandler } from '../job-handler';
import { JobData, JobName, MAX_LOGS_PER_BATCH_JOB } from '../jobs';
import { LogBatchWriter } from '../log-batch-writer';
import { derivedLogId } from '../log-ids';

/** One log from another service (or anyone): validated, then written with the jobs running alongside. */
export class AuditLogHandler extends JobHandler<JobName.AuditLog> {
  readonly job = JobName.AuditLog;

  constructor(private readonly writer: LogBatchWriter) {
    super();
  }

  handle(data: JobData[JobName.AuditLog], context: JobContext): Promise<void> {
    const log = invalidJobOnError(() => parseLogEntry(data, defaultsFor(context, 0)));
    return failedForGoodOnConflict(this.writer.write([log]));
  }
}

/** Up to 1000 logs in one job: how the api publishes its committed audit events. All or nothing. */
export class AuditLogBatchHandler extends JobHandler<JobName.AuditLogBatch> {
  readonly job = JobName.AuditLogBatch;

  constructor(private readonly writer: LogBatchWriter) {
    super();
  }

  handle(data: JobData[JobName.AuditLogBatch], context: JobContext): Promise<void> {
    const logs = invalidJobOnError(() => parseBatch(data, context));
    return failedForGoodOnConflict(this.writer.write(logs));
  }
}

function parseBatch(data: unknown, context: JobContext): AuditEvent[] {
  const entries = (data as { logs?: unknown } | null)?.logs;
  const extra = typeof data === 'object' && data !== null ? Object.keys(data).filter((k) => k !== 'logs') : [];
  if (!Array.isArray(entries) || entries.length === 0 || entries.length > MAX_LOGS_PER_BATCH_JOB || extra.length > 0) {
    throw new InvalidJobError(`invalid ${JobName.AuditLogBatch} payload: must be {"logs": [...]} with 1 to ${MAX_LOGS_PER_BATCH_JOB} entries and nothing else`);
  }
  const errors: FieldErrors = {};
  const logs: AuditEvent[] = [];
  entries.forEach((entry, i) => {
    try {
      logs.push(parseLogEntry(entry, defaultsFor(context, i), `logs[${i}]`));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      Object.assign(errors, error.fieldErrors);
    }
  });
  if (Object.keys(errors).length > 0) throw invalidPayload(JobName.AuditLogBatch, errors);
  return logs;
}

/**
 * Computed only for an entry that lacks the field: a name-based id is a SHA-256, and most entries carry their own.
 * (A class, so that its getters are the prototype's: an object literal with getters per log cost more than the rest
 * of its validation.)
 */
class JobLogDefaults implements LogEntryDefaults {
  constructor(
    private readonly context: JobContext,
    private readonly index: number,
  ) {}

  get id(): string {
    return derivedLogId(this.context, this.index);
  }

  get createdAt(): Date {
    return new Date(this.context.timestamp);
  }
}

function defaultsFor(context: JobContext, index: number): LogEntryDefaults {
  return new JobLogDefaults(context, index);
}

function invalidJobOnError<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof DomainError && error.fieldErrors) throw invalidPayload(JobName.AuditLog, error.fieldErrors);
    throw error;
  }
}

/** The failed set's reason: every field and its messages, e.g. `tenant_id: must be a UUID`. */
function invalidPayload(job: JobName, errors: FieldErrors): InvalidJobError {
  const reasons = Object.entries(errors).map(([field, messages]) => `${field}: ${messages.join(', ')}`);
  return new InvalidJobError(`invalid ${job} payload: ${reasons.join('; ')}`);
}

/** A log id stored under another tenant stays so on every retry: the job fails at once, into the failed set. */
function failedForGoodOnConflict(write: Promise<void>): Promise<void> {
  return write.catch((error: unknown) => {
    throw error instanceof LogIdConflictError ? new InvalidJobError(error.message) : error;
  });
}
