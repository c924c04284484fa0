import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ENTITY_TYPES, ListLogs, Principal } from '@gatehouse/domain';
import { CurrentPrincipal, RequirePermission } from '../auth/auth.decorators';
import { envelope, PaginatedEnvelope, toPageQuery } from '../http/paging.dto';
import { EntityTypeResponse, ListLogsQueryDto, LogListResponse, LogResponse, toEntityTypeResponse, toLogResponse } from './logs.dto';

@ApiTags('logs')
@ApiSecurity('api-key')
@Controller('logs')
export class LogsController {
  constructor(private readonly listLogs: ListLogs) {}

  @Get()
  @ApiOperation({ operationId: 'listLogs', summary: 'List audit logs, newest first' })
  @RequirePermission('log:read')
  @ApiOkResponse({ type: LogListResponse, description: 'Newest first; with `start` (keyset paging) the pagination carries `next` and `page_size` only' })
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListLogsQueryDto): Promise<PaginatedEnvelope<LogResponse>> {
    const page = await this.listLogs.execute(
      principal,
      {
        entityType: query.entity_type,
        entityId: query.entity_id,
        startDate: query.start_date === undefined ? undefined : new Date(query.start_date),
        endDate: query.end_date === undefined ? undefined : new Date(query.end_date),
      },
      toPageQuery(query),
    );
    return envelope(page, toLogResponse);
  }

  @Get('entity-types')
  @ApiOperation({ operationId: 'listLogEntityTypes', summary: 'List the entity types of audit logs' })
  @RequirePermission('log:read')
  @ApiOkResponse({ type: [EntityTypeResponse] })
  entityTypes(): EntityTypeResponse[] {
    return ENTITY_TYPES.map(toEntityTypeResponse);
  }
}
