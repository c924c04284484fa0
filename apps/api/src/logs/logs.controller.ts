import { Controller, Get, Query } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiSecurity, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { CheckpointSigner, ENTITY_TYPES, ListLogCheckpoints, ListLogs, Principal, rawPublicKey } from '@gatehouse/domain';
import { CurrentPrincipal, RequirePermission } from '../auth/auth.decorators';
import { envelope, PaginatedEnvelope, PagingQueryDto, toPageQuery } from '../http/paging.dto';
import {
  EntityTypeResponse,
  ListLogsQueryDto,
  LogCheckpointResponse,
  LogPublicKeyResponse,
  LogResponse,
  toCheckpointResponse,
  toEntityTypeResponse,
  toLogResponse,
} from './logs.dto';

@ApiTags('logs')
@ApiSecurity('api-key')
@ApiExtraModels(LogResponse, LogCheckpointResponse)
@Controller('logs')
export class LogsController {
  constructor(
    private readonly listLogs: ListLogs,
    private readonly listCheckpoints: ListLogCheckpoints,
    private readonly signer: CheckpointSigner,
  ) {}

  @Get()
  @RequirePermission('log:read')
  @ApiOkResponse({
    description: 'Newest first; with `start` (keyset paging) the pagination carries `next` and `page_size` only',
    schema: { properties: { pagination: { type: 'object' }, data: { type: 'array', items: { $ref: getSchemaPath(LogResponse) } } } },
  })
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListLogsQueryDto): Promise<PaginatedEnvelope<LogResponse>> {
    const page = await this.listLogs.execute(
      principal,
      {
        entityType: query.entity_type,
        entityId: query.entity_id,
        actorId: query.actor_id?.toLowerCase(),
        requestId: query.request_id,
        startDate: query.start_date === undefined ? undefined : new Date(query.start_date),
        endDate: query.end_date === undefined ? undefined : new Date(query.end_date),
      },
      toPageQuery(query),
    );
    return envelope(page, toLogResponse);
  }

  @Get('checkpoints')
  @RequirePermission('log:read')
  @ApiOkResponse({
    description: "The tenant's signed chain heads, newest (highest position) first",
    schema: { properties: { pagination: { type: 'object' }, data: { type: 'array', items: { $ref: getSchemaPath(LogCheckpointResponse) } } } },
  })
  async checkpoints(@CurrentPrincipal() principal: Principal, @Query() query: PagingQueryDto): Promise<PaginatedEnvelope<LogCheckpointResponse>> {
    return envelope(await this.listCheckpoints.execute(principal, toPageQuery(query)), toCheckpointResponse);
  }

  /** Any valid key: a verifier needs nothing else. */
  @Get('public-key')
  @ApiOkResponse({ type: LogPublicKeyResponse })
  publicKey(): LogPublicKeyResponse {
    const key = this.signer.publicKey;
    return {
      algorithm: 'Ed25519',
      key_id: this.signer.keyId,
      public_key: rawPublicKey(key).toString('base64'),
      public_key_pem: key.export({ format: 'pem', type: 'spki' }) as string,
    };
  }

  @Get('entity-types')
  @RequirePermission('log:read')
  @ApiOkResponse({ type: [EntityTypeResponse] })
  entityTypes(): EntityTypeResponse[] {
    return ENTITY_TYPES.map(toEntityTypeResponse);
  }
}
