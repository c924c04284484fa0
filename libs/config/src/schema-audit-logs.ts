import { boolean, integer, oneOf, variable } from './variable-kinds';

export const LOG_PARTITION_INTERVALS = ['day', 'week', 'month'] as const;

/**
 * The audit-log group of the configuration (schema.ts lists every variable): the worker's checkpoints, retention and
 * partitions, and the log streams. Their signing keys are with the other keys (schema-keys.ts).
 */
export const AUDIT_LOG_VARIABLES = [
  variable({
    name: 'LOG_RETENTION_INTERVAL_MS',
    key: 'logRetentionIntervalMs',
    group: 'auditLogs',
    readBy: 'worker',
    kind: integer(10_000, 86_400_000, 600_000),
    meaning:
      "how often the worker removes the logs older than their tenant's retention period, in bounded batches behind a signed retention anchor ([retention](docs/audit-trail.md#retention-and-its-anchor))",
  }),
  variable({
    name: 'LOG_RETENTION_DAYS',
    key: 'logRetentionDays',
    group: 'auditLogs',
    readBy: 'both',
    kind: integer(1, 36_500),
    example: '365',
    meaning:
      'the retention period (days) of every tenant without one of its own (unset: kept forever); the worker drops whole log partitions older than every retention that applies to their logs, behind signed retention anchors ([retention](docs/audit-trail.md#retention-and-its-anchor))',
  }),
  variable({
    name: 'LOG_CHECKPOINT_INTERVAL_MS',
    key: 'logCheckpointIntervalMs',
    group: 'auditLogs',
    readBy: 'worker',
    kind: integer(1000, 60_000, 30_000),
    meaning: 'how often the worker signs the head of every chain that grew (1000 to 60000)',
  }),
  variable({
    name: 'LOG_STREAM_ALLOW_PLAIN_SYSLOG',
    key: 'logStreamAllowPlainSyslog',
    group: 'auditLogs',
    readBy: 'both',
    kind: boolean(false),
    meaning: 'allow `syslog` log streams over plain TCP (`tls: false`); off, syslog streams use TLS only ([log streams](docs/audit-trail.md#streams))',
  }),
  variable({
    name: 'LOG_STREAM_CONCURRENCY',
    key: 'logStreamConcurrency',
    group: 'auditLogs',
    readBy: 'worker',
    kind: integer(1, 64, 4),
    meaning: 'log streams one worker delivers at once (1 to 64), each under a lease',
  }),
  variable({
    name: 'LOG_STREAM_INTERVAL_MS',
    key: 'logStreamIntervalMs',
    group: 'auditLogs',
    readBy: 'worker',
    kind: integer(100, 60_000, 1000),
    meaning: 'how often the worker looks for log streams behind their chain head (100 to 60000)',
  }),
  variable({
    name: 'LOG_PARTITION_INTERVAL',
    key: 'logPartitionInterval',
    group: 'auditLogs',
    readBy: 'worker',
    kind: oneOf(LOG_PARTITION_INTERVALS, 'month'),
    meaning:
      'the span of one partition of the logs table by `created_at` (UTC): `day`, `week` or `month`; the worker creates the current one and the next ones ahead (docs/audit-trail.md, "Time partitions")',
  }),
];
