import { AppConfig, resolveLogSigningKey } from '@gatehouse/config';
import { CheckpointSigner, LogPartitionInterval, parsePublicKey } from '@gatehouse/domain';
import type { BullmqJobQueue } from './bullmq/bullmq-job-queue';
import type { InProcessJobQueue } from './in-process/in-process-job-queue';
import type { LogBatchOptions } from './log-batch-writer';
import type { PublisherOptions } from './queued-audit-event-publisher';

export interface BackgroundJobsOptions {
  /** Run the jobs in this process: the worker, or the API when there is no Redis. */
  runJobs: boolean;
  /** BullMQ on this Redis; without it an in-process queue (and the jobs only run where `runJobs`). */
  redisUrl?: string;
  /** Key prefix of the BullMQ queues (default `gatehouse`): keys are `<prefix>:audit-logs:*`. */
  prefix?: string;
  /** False leaves audit events to the outbox relay alone (benchmarks compare the two). Default true. */
  publishAuditEvents?: boolean;
  expirySweepIntervalMs?: number;
  outboxRelayIntervalMs?: number;
  /** An outbox event younger than this is presumed on its way through the queue. */
  outboxRelayMinAgeMs?: number;
  /** Log jobs run at once per worker: the upper bound of rows one flush gathers from single-log jobs. */
  logJobConcurrency?: number;
  logBatch?: Partial<LogBatchOptions>;
  publisher?: Partial<PublisherOptions>;
  retry?: { maxAttempts?: number; backoffBaseMs?: number; backoffMaxMs?: number };
  /** Signs the log chains' heads (where jobs run) and gives the api its public key. */
  checkpointSigner: CheckpointSigner;
  /** How often the chains that grew get a signed checkpoint (default 30 s). */
  checkpointIntervalMs?: number;
  /** How often logs past their tenant's retention period are removed (default 10 min). */
  retentionIntervalMs?: number;
  /** LOG_RETENTION_DAYS: the retention of a tenant without its own, and whole partitions dropped (default: none). */
  logRetentionDays?: number;
  /** LOG_PARTITION_INTERVAL: the logs' time partitions are days, weeks or months (default). */
  logPartitionInterval?: LogPartitionInterval;
  /** How often the partitions ahead are checked and created (default hourly, and at start). */
  logPartitionCheckIntervalMs?: number;
}

/**
 * The options of both jobs modules from the configuration, the same for the api and the worker: `runJobs` and
 * `tuning` (tests shorten the relay's and the sweep's intervals) are what differs.
 */
export function backgroundJobsOptions(config: AppConfig, runJobs: boolean, tuning: Partial<BackgroundJobsOptions> = {}): BackgroundJobsOptions {
  return {
    redisUrl: config.redisUrl,
    prefix: config.queuePrefix,
    checkpointSigner: new CheckpointSigner(
      () => resolveLogSigningKey(config).key,
      config.logSigningRetiredKeys.map((key) => parsePublicKey(key)),
    ),
    retentionIntervalMs: config.logRetentionIntervalMs,
    logRetentionDays: config.logRetentionDays,
    checkpointIntervalMs: config.logCheckpointIntervalMs,
    logPartitionInterval: config.logPartitionInterval,
    ...tuning,
    runJobs,
  };
}

const DEFAULT_QUEUE_PREFIX = 'gatehouse';

/** The queue drivers of this process, for the BackgroundJobsModule that starts and stops them. */
export abstract class QueueDrivers {
  abstract readonly bullmq?: BullmqJobQueue;
  abstract readonly inProcess?: InProcessJobQueue;
}

/** Key prefix of the BullMQ queues: keys are `<prefix>:audit-logs:*`. */
export function queuePrefix(options: BackgroundJobsOptions): string {
  return options.prefix ?? DEFAULT_QUEUE_PREFIX;
}

/** Attempts and backoff of a failing job, the same for both drivers. */
export function retryOptions(options: BackgroundJobsOptions) {
  return { maxAttempts: 12, backoffBaseMs: 1000, backoffMaxMs: 60_000, ...options.retry };
}
