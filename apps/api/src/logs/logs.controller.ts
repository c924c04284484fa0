import { Controller, Get, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { CheckpointSigner, ENTITY_TYPES, ExportLogs, GetRetentionAnchor, ListLogCheckpoints, ListLogs, Principal } from '@gatehouse/domain';
import { CurrentPrincipal, RequirePermission } from '../auth/auth.decorators';
import { envelope, PaginatedEnvelope, PagingQueryDto, toPageQuery } from '../http/paging.dto';
import { ValidatedQuery } from '../http/validation';
import {
  EntityTypeResponse,
  ExportLogsQueryDto,
  ListLogsQueryDto,
  LogCheckpointListResponse,
  LogCheckpointResponse,
  LogListResponse,
  LogPublicKeyResponse,
  LogPublicKeysResponse,
  LogResponse,
  RetentionAnchorResponse,
  toCheckpointResponse,
  toEntityTypeResponse,
  toLogFilter,
  toLogResponse,
  toPublicKeyResponse,
} from './logs.dto';
import { streamLogExport } from './log-export.stream';

@ApiTags('logs')
@ApiSecurity('api-key')
@Controller('logs')
export class LogsController {
  constructor(
    private readonly listLogs: ListLogs,
    private readonly listCheckpoints: ListLogCheckpoints,
    private readonly exportLogs: ExportLogs,
    private readonly signer: CheckpointSigner,
    private readonly retentionAnchor: GetRetentionAnchor,
  ) {}

  @Get()
  @ApiOperation({ operationId: 'listLogs', summary: 'List audit logs, newest first' })
  @RequirePermission('log:read')
  @ApiOkResponse({ type: LogListResponse, description: 'Newest first; with `start` (keyset paging) the pagination carries `next` and `page_size` only' })
  async list(@CurrentPrincipal() principal: Principal, @ValidatedQuery() query: ListLogsQueryDto): Promise<PaginatedEnvelope<LogResponse>> {
    const page = await this.listLogs.execute(principal, toLogFilter(query), toPageQuery(query));
    return envelope(page, toLogResponse);
  }

  @Get('export')
  @ApiOperation({ operationId: 'exportLogs', summary: 'Export audit logs (NDJSON or CSV), streamed' })
  @RequirePermission('log:read')
  @ApiProduces('application/x-ndjson', 'text/csv')
  @ApiOkResponse({
    description:
      'Every matching log up to the chain head at the start, in position order, streamed (no paging): one JSON Log per line, ' +
      'or CSV with a header row. Audited as a `read` of the tenant.',
    content: {
      'application/x-ndjson': { schema: { type: 'string', description: 'One JSON Log (as in `GET /logs`) per line' } },
      'text/csv': { schema: { type: 'string', description: 'A header row, then one row per log' } },
    },
  })
  async export(@CurrentPrincipal() principal: Principal, @ValidatedQuery() query: ExportLogsQueryDto, @Res() res: Response): Promise<void> {
    const format = query.format ?? 'ndjson';
    const exported = await this.exportLogs.execute(principal, toLogFilter(query), format);
    await streamLogExport(res, exported, format);
  }

  @Get('checkpoints')
  @ApiOperation({ operationId: 'listLogCheckpoints', summary: 'List the signed checkpoints of the log chain' })
  @RequirePermission('log:read')
  @ApiOkResponse({ type: LogCheckpointListResponse, description: "The tenant's signed chain heads, newest (highest position) first" })
  async checkpoints(@CurrentPrincipal() principal: Principal, @ValidatedQuery() query: PagingQueryDto): Promise<PaginatedEnvelope<LogCheckpointResponse>> {
    return envelope(await this.listCheckpoints.execute(principal, toPageQuery(query)), toCheckpointResponse);
  }

  /** Any valid key: a verifier needs nothing else. */
  @Get('public-key')
  @ApiOperation({ operationId: 'getLogPublicKey', summary: 'Get the public key that verifies checkpoints' })
  @ApiOkResponse({ type: LogPublicKeyResponse })
  publicKey(): LogPublicKeyResponse {
    const { status: _current, ...key } = toPublicKeyResponse(this.signer.publicKeys()[0]!);
    return key;
  }

  /** Any valid key: a verifier needs nothing else. Keys rotate: checkpoints and anchors name the key that signed. */
  @Get('public-keys')
  @ApiOperation({ operationId: 'listLogPublicKeys', summary: 'List the current and retired public keys that verify checkpoints and retention anchors' })
  @ApiOkResponse({ type: LogPublicKeysResponse })
  publicKeys(): LogPublicKeysResponse {
    return { data: this.signer.publicKeys().map(toPublicKeyResponse) };
  }

  @Get('retention-anchor')
  @ApiOperation({
    operationId: 'getLogRetentionAnchor',
    summary: "Get the anchor the retained trail verifies from (the tenant's retention removed the logs up to it)",
  })
  @RequirePermission('log:read')
  @ApiOkResponse({ type: RetentionAnchorResponse })
  async anchor(@CurrentPrincipal() principal: Principal): Promise<RetentionAnchorResponse> {
    const anchor = await this.retentionAnchor.execute(principal.tenantId);
    return { anchor: anchor ? toCheckpointResponse(anchor) : null };
  }

  @Get('entity-types')
  @ApiOperation({ operationId: 'listLogEntityTypes', summary: 'List the entity types of audit logs' })
  @RequirePermission('log:read')
  @ApiOkResponse({ type: [EntityTypeResponse] })
  entityTypes(): EntityTypeResponse[] {
    return ENTITY_TYPES.map(toEntityTypeResponse);
  }
}
