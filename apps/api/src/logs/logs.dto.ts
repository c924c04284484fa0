import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID, MaxLength, MinLength } from 'class-validator';
import {
  ACTOR_TYPES,
  ENTITY_TYPE_VALUES,
  EntityType,
  Log,
  LOG_OPERATIONS,
  LogCheckpoint,
  LogExportFormat,
  LogFilter,
  MAX_ENTITY_ID_LENGTH,
  MAX_REQUEST_ID_LENGTH,
  rawPublicKey,
  SigningPublicKey,
  toLogJson,
} from '@gatehouse/domain';
import { PaginationResponse, PagingQueryDto } from '../http/paging.dto';
import { DATE_OR_DATE_TIME_SCHEMA, IsDateOrDateTime } from '../http/date-fields';

/** The filters of `GET /logs`, shared by `GET /logs/export`. */
export class LogFilterQueryDto {
  @ApiPropertyOptional({ enum: ENTITY_TYPE_VALUES })
  @IsOptional()
  @IsIn(ENTITY_TYPE_VALUES, { message: 'must be one of the values of GET /logs/entity-types' })
  entity_type?: string;

  @ApiPropertyOptional({ description: 'Identifier of the entity; give entity_type with it', maxLength: MAX_ENTITY_ID_LENGTH })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_ENTITY_ID_LENGTH)
  entity_id?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'Logs of this actor (the calling application)' })
  @IsOptional()
  @IsUUID('all', { message: 'must be a UUID' })
  actor_id?: string;

  @ApiPropertyOptional({ description: 'Logs of one request to this API (its `x-request-id`)', maxLength: MAX_REQUEST_ID_LENGTH })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_REQUEST_ID_LENGTH)
  request_id?: string;

  @ApiPropertyOptional({
    ...DATE_OR_DATE_TIME_SCHEMA,
    description: 'Logs with created_at at or after this instant (inclusive); a date alone is its midnight UTC',
  })
  @IsOptional()
  @IsDateOrDateTime()
  start_date?: string;

  @ApiPropertyOptional({ ...DATE_OR_DATE_TIME_SCHEMA, description: 'Logs with created_at before this instant (exclusive); a date alone is its midnight UTC' })
  @IsOptional()
  @IsDateOrDateTime()
  end_date?: string;
}

export class ListLogsQueryDto extends IntersectionType(PagingQueryDto, LogFilterQueryDto) {}

export class ExportLogsQueryDto extends LogFilterQueryDto {
  @ApiPropertyOptional({ enum: ['ndjson', 'csv'], default: 'ndjson' })
  @IsOptional()
  @IsIn(['ndjson', 'csv'], { message: 'must be ndjson or csv' })
  format?: LogExportFormat;
}

export function toLogFilter(query: LogFilterQueryDto): LogFilter {
  return {
    entityType: query.entity_type,
    entityId: query.entity_id,
    actorId: query.actor_id?.toLowerCase(),
    requestId: query.request_id,
    startDate: query.start_date === undefined ? undefined : new Date(query.start_date),
    endDate: query.end_date === undefined ? undefined : new Date(query.end_date),
  };
}

export class LogResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tenant_id: string;
  @ApiPropertyOptional({ format: 'uuid' }) actor_id?: string;
  @ApiPropertyOptional({ enum: ACTOR_TYPES }) actor_type?: string;
  @ApiProperty({ enum: ENTITY_TYPE_VALUES }) entity_type: string;
  @ApiProperty() entity_id: string;
  @ApiProperty({ enum: LOG_OPERATIONS }) operation: string;
  @ApiProperty() message: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiPropertyOptional({ description: 'The request to this API that caused the log (its x-request-id)' }) request_id?: string;
  @ApiPropertyOptional({ description: "The client's address, after the trusted proxies' X-Forwarded-For" }) source_ip?: string;
  @ApiPropertyOptional() user_agent?: string;
  @ApiProperty({ description: "Place in the tenant's hash chain: 1, 2, 3, ... in the order the logs were written", minimum: 1 })
  position: number;
  @ApiProperty({ description: 'Chain hash of this log (SHA-256, hex): see the README, "Verifying the audit trail"', pattern: '^[0-9a-f]{64}$' })
  hash: string;
}

export class LogCheckpointResponse {
  @ApiProperty({ format: 'uuid' }) tenant_id: string;
  @ApiProperty({ description: 'The chain position this checkpoint covers (every log up to it)', minimum: 1 }) position: number;
  @ApiProperty({ description: 'The chain hash at that position (hex)', pattern: '^[0-9a-f]{64}$' }) hash: string;
  @ApiProperty({ format: 'date-time' }) signed_at: string;
  @ApiProperty({ description: 'Id of the signing key (GET /logs/public-key)' }) key_id: string;
  @ApiProperty({ description: 'Ed25519 signature (base64) of the checkpoint message' }) signature: string;
}

export class LogPublicKeyResponse {
  @ApiProperty({ enum: ['Ed25519'] }) algorithm: string;
  @ApiProperty({ description: 'First 16 hex digits of the SHA-256 of the raw public key' }) key_id: string;
  @ApiProperty({ description: 'The raw 32-byte public key, base64' }) public_key: string;
  @ApiProperty({ description: 'The same key as PEM (SPKI)' }) public_key_pem: string;
}

export class LogPublicKeysItem extends LogPublicKeyResponse {
  @ApiProperty({ enum: ['current', 'retired'], description: '`current` signs now; a `retired` key signed earlier checkpoints and anchors' })
  status: 'current' | 'retired';
}

export class LogPublicKeysResponse {
  @ApiProperty({ type: [LogPublicKeysItem], description: 'The current key first, then the retired ones' }) data: LogPublicKeysItem[];
}

export class RetentionAnchorResponse {
  @ApiProperty({
    type: LogCheckpointResponse,
    nullable: true,
    description:
      "The newest retention anchor: the logs up to its position were removed by the tenant's retention period, and the trail verifies from its hash (its signature covers `gatehouse.retention.v1`); null when none was removed",
  })
  anchor: LogCheckpointResponse | null;
}

export function toPublicKeyResponse(key: SigningPublicKey): LogPublicKeysItem {
  return {
    algorithm: 'Ed25519',
    key_id: key.keyId,
    public_key: rawPublicKey(key.publicKey).toString('base64'),
    public_key_pem: key.publicKey.export({ format: 'pem', type: 'spki' }) as string,
    status: key.current ? 'current' : 'retired',
  };
}

export function toCheckpointResponse(checkpoint: LogCheckpoint): LogCheckpointResponse {
  return {
    tenant_id: checkpoint.tenantId,
    position: checkpoint.position,
    hash: checkpoint.hash,
    signed_at: checkpoint.signedAt.toISOString(),
    key_id: checkpoint.keyId,
    signature: checkpoint.signature,
  };
}

export class LogListResponse {
  @ApiProperty({ type: PaginationResponse }) pagination: PaginationResponse;
  @ApiProperty({ type: [LogResponse] }) data: LogResponse[];
}

export class LogCheckpointListResponse {
  @ApiProperty({ type: PaginationResponse }) pagination: PaginationResponse;
  @ApiProperty({ type: [LogCheckpointResponse] }) data: LogCheckpointResponse[];
}

export class EntityTypeResponse {
  @ApiProperty({ example: 'Application' }) display_name: string;
  @ApiProperty({ example: 'application' }) value: string;
}

/** Field order of spec 2.2 on the wire, then the request fields (absent when unknown), then the chain's. */
export function toLogResponse(log: Log): LogResponse {
  return { ...toLogJson(log), position: log.position, hash: log.hash };
}

export function toEntityTypeResponse(type: EntityType): EntityTypeResponse {
  return { display_name: type.displayName, value: type.value };
}
