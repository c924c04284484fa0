import type { LogEntryPayload } from './log-entry-payload';

/** The BullMQ queues (keys `<prefix>:<queue>:*`); logs and expiries apart so a log backlog never delays an expiry. */
export const QueueName = {
  AuditLogs: 'audit-logs',
  ApplicationExpiry: 'application-expiry',
} as const;
export type QueueName = (typeof QueueName)[keyof typeof QueueName];

/** Every job there is. Other services add `audit-log` and `audit-log-batch` jobs (docs/audit-trail.md, "Writing logs from another service"). */
export enum JobName {
  AuditLog = 'audit-log',
  AuditLogBatch = 'audit-log-batch',
  ExpireApplication = 'expire-application',
}

export const MAX_LOGS_PER_BATCH_JOB = 1000;

/** The payload of each job, as JSON on the queue. */
export interface JobData {
  [JobName.AuditLog]: LogEntryPayload;
  [JobName.AuditLogBatch]: { logs: LogEntryPayload[] };
  [JobName.ExpireApplication]: { tenant_id: string; application_id: string };
}

export const QUEUE_OF: Record<JobName, QueueName> = {
  [JobName.AuditLog]: QueueName.AuditLogs,
  [JobName.AuditLogBatch]: QueueName.AuditLogs,
  [JobName.ExpireApplication]: QueueName.ApplicationExpiry,
};

/** The job id of an application's expiry: one per application, so scheduling it twice adds nothing. */
export function expiryJobId(applicationId: string): string {
  return `expire-${applicationId}`;
}
