import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { ACTOR_TYPES, ENTITY_TYPE_VALUES, EntityType, Log, LOG_OPERATIONS, MAX_ENTITY_ID_LENGTH } from '@gatehouse/domain';
import { PaginationResponse, PagingQueryDto } from '../http/paging.dto';

const DATE_TIME = { strict: true, strictSeparator: true };

export class ListLogsQueryDto extends PagingQueryDto {
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

  @ApiPropertyOptional({ format: 'date-time', description: 'Logs with created_at at or after this instant (inclusive)' })
  @IsOptional()
  @IsISO8601(DATE_TIME, { message: 'must be an ISO 8601 date or date-time' })
  start_date?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Logs with created_at before this instant (exclusive)' })
  @IsOptional()
  @IsISO8601(DATE_TIME, { message: 'must be an ISO 8601 date or date-time' })
  end_date?: string;
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
}

export class LogListResponse {
  @ApiProperty({ type: PaginationResponse }) pagination: PaginationResponse;
  @ApiProperty({ type: [LogResponse] }) data: LogResponse[];
}

export class EntityTypeResponse {
  @ApiProperty({ example: 'Application' }) display_name: string;
  @ApiProperty({ example: 'application' }) value: string;
}

export function toLogResponse(log: Log): LogResponse {
  const body: LogResponse = {
    id: log.id,
    tenant_id: log.tenantId,
    entity_type: log.entityType,
    entity_id: log.entityId,
    operation: log.operation,
    message: log.message,
    created_at: log.createdAt.toISOString(),
  };
  if (log.actorId !== null) body.actor_id = log.actorId;
  if (log.actorType !== null) body.actor_type = log.actorType;
  // Field order of spec 2.2 on the wire.
  return {
    id: body.id,
    tenant_id: body.tenant_id,
    ...(body.actor_id ? { actor_id: body.actor_id } : {}),
    ...(body.actor_type ? { actor_type: body.actor_type } : {}),
    entity_type: body.entity_type,
    entity_id: body.entity_id,
    operation: body.operation,
    message: body.message,
    created_at: body.created_at,
  };
}

export function toEntityTypeResponse(type: EntityType): EntityTypeResponse {
  return { display_name: type.displayName, value: type.value };
}
