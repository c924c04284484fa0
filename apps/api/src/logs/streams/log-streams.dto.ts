import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsOptional, IsString } from 'class-validator';
import { LOG_STREAM_KINDS, LogStream, LogStreamStatus, MAX_LOG_STREAM_NAME_LENGTH, streamState } from '@gatehouse/domain';
import { PaginationResponse } from '../../http/paging.dto';

// The DTOs check shapes; the settings of each kind are checked by the domain (resolveStreamSettings), every error at once.
const MUST_BE_OBJECT = { message: 'must be an object' };

const SETTINGS_DOC = [
  "The kind's settings (docs/audit-trail.md#streams). Secrets (`token`, `api_key`) are write-only: never returned.",
  '`https`: `url` (required); the signing secret is generated and returned once, in the create response.',
  '`syslog`: `host` (required), `port` (6514), `tls` (true; false only where the operator allows plain TCP), `app_name`, `hostname`, `facility` (13).',
  '`splunk_hec`: `url` (required, the collector base URL), `token` (required, secret), `index`, `source`, `sourcetype`, `host`.',
  '`datadog`: `url` (https://http-intake.logs.datadoghq.com), `api_key` (required, secret), `service`, `source`, `tags`, `hostname`.',
  'Every kind: `batch_size` (1 to 1000, 500), `tls_ca` (PEM certificates to trust beside the system CAs).',
].join(' ');

const SETTINGS_EXAMPLES = {
  https: { summary: 'HTTPS, signed per Standard Webhooks', value: { name: 'siem', kind: 'https', settings: { url: 'https://siem.example.com/gatehouse' } } },
  syslog: { summary: 'Syslog over TLS', value: { name: 'rsyslog', kind: 'syslog', settings: { host: 'logs.example.com', port: 6514 } } },
  splunk: {
    summary: 'Splunk HEC',
    value: {
      name: 'splunk',
      kind: 'splunk_hec',
      settings: { url: 'https://splunk.example.com:8088', token: '00000000-0000-0000-0000-000000000000', index: 'audit' },
    },
  },
  datadog: {
    summary: 'Datadog',
    value: { name: 'datadog', kind: 'datadog', settings: { url: 'https://http-intake.logs.datadoghq.eu', api_key: 'dd-api-key', tags: 'env:prod' } },
  },
};
export { SETTINGS_EXAMPLES as LOG_STREAM_BODY_EXAMPLES };

export class CreateLogStreamDto {
  @ApiProperty({ maxLength: MAX_LOG_STREAM_NAME_LENGTH })
  @IsString()
  name: string;

  @ApiProperty({ enum: LOG_STREAM_KINDS })
  @IsString()
  kind: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: SETTINGS_DOC })
  @IsObject(MUST_BE_OBJECT)
  settings: Record<string, unknown>;

  @ApiPropertyOptional({
    enum: ['now', 'beginning'],
    nullable: true,
    default: 'now',
    description: "`now` (or null): from the tenant's next log; `beginning`: every log from position 1",
  })
  @IsOptional()
  @IsIn(['now', 'beginning'])
  start?: 'now' | 'beginning' | null;
}

/** PATCH /logs/streams/{id}, a merge patch: `settings` members merge over the stored ones, null clears one. */
export class PatchLogStreamDto {
  @ApiPropertyOptional({ maxLength: MAX_LOG_STREAM_NAME_LENGTH })
  @IsOptional()
  @IsString()
  name?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: `Members to change. ${SETTINGS_DOC}` })
  @IsOptional()
  @IsObject(MUST_BE_OBJECT)
  settings?: Record<string, unknown>;
}

export class LogStreamLagResponse {
  @ApiProperty({ type: 'integer', description: 'Logs written and not yet acknowledged by the receiver' }) logs: number;
  @ApiProperty({ type: Number, nullable: true, description: 'Age in seconds of the oldest log not yet acknowledged; null when caught up' })
  seconds: number | null;
}

export class LogStreamResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: LOG_STREAM_KINDS }) kind: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The settings without their secrets' }) settings: Record<string, unknown>;
  @ApiProperty({ type: [String], description: 'The names of the secrets the stream holds (their values are never returned)' }) secrets: string[];
  @ApiProperty({ enum: ['active', 'paused', 'failing'] }) state: string;
  @ApiProperty({ type: String, nullable: true, description: 'Why the last attempt failed (failing only)' }) last_error: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last_error_at: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When the receiver last acknowledged a batch' }) last_synced_at: string | null;
  @ApiProperty({ type: 'integer', description: 'Chain position of the last log the receiver acknowledged (0: none)' }) position: number;
  @ApiProperty({ type: 'integer', description: "The tenant's chain head" }) head_position: number;
  @ApiProperty({ type: LogStreamLagResponse }) lag: LogStreamLagResponse;
  @ApiProperty({ type: 'integer', description: 'Logs acknowledged so far' }) delivered: number;
  @ApiProperty({ type: 'integer', description: 'Logs sent again after an attempt whose acknowledgement was lost (at least once)' }) redelivered: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) modified_at: string;
}

export class CreatedLogStreamResponse extends LogStreamResponse {
  @ApiPropertyOptional({ description: '`https` only, shown this once: the Standard Webhooks secret (`whsec_...`) the receiver verifies signatures with' })
  signing_secret?: string;
}

export class LogStreamListResponse {
  @ApiProperty({ type: PaginationResponse }) pagination: PaginationResponse;
  @ApiProperty({ type: [LogStreamResponse] }) data: LogStreamResponse[];
}

export function toLogStreamResponse(
  status: LogStreamStatus | { stream: LogStream; headPosition?: number; oldestPendingAt?: Date | null },
  now = new Date(),
): LogStreamResponse {
  const { stream } = status;
  const head = Math.max(status.headPosition ?? stream.position, stream.position);
  const oldest = status.oldestPendingAt ?? null;
  return {
    id: stream.id,
    name: stream.name,
    kind: stream.kind,
    settings: { ...stream.settings },
    secrets: Object.keys(stream.secrets).sort(),
    state: streamState(stream),
    last_error: stream.lastError,
    last_error_at: stream.lastErrorAt?.toISOString() ?? null,
    last_synced_at: stream.lastSyncedAt?.toISOString() ?? null,
    position: stream.position,
    head_position: head,
    lag: { logs: head - stream.position, seconds: oldest === null ? null : Math.max(0, (now.getTime() - oldest.getTime()) / 1000) },
    delivered: stream.delivered,
    redelivered: stream.redelivered,
    created_at: stream.createdAt.toISOString(),
    modified_at: stream.modifiedAt.toISOString(),
  };
}
