import { Controller, Delete, Get, HttpCode, Param, Patch, Post, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CreateLogStream, DeleteLogStream, GetLogStream, ListLogStreams, PauseLogStream, Principal, ResumeLogStream, UpdateLogStream } from '@gatehouse/domain';
import { CurrentPrincipal, RequirePermission } from '../../auth/auth.decorators';
import { envelope, PaginatedEnvelope, PagingQueryDto, toPageQuery } from '../../http/paging.dto';
import { UuidParamPipe, ValidatedBody, ValidatedQuery } from '../../http/validation';
import {
  CreatedLogStreamResponse,
  CreateLogStreamDto,
  LOG_STREAM_BODY_EXAMPLES,
  LogStreamListResponse,
  LogStreamResponse,
  PatchLogStreamDto,
  toLogStreamResponse,
} from './log-streams.dto';

@ApiTags('logs')
@ApiSecurity('api-key')
@Controller('logs/streams')
export class LogStreamsController {
  constructor(
    private readonly createStream: CreateLogStream,
    private readonly listStreams: ListLogStreams,
    private readonly getStream: GetLogStream,
    private readonly updateStream: UpdateLogStream,
    private readonly pauseStream: PauseLogStream,
    private readonly resumeStream: ResumeLogStream,
    private readonly deleteStream: DeleteLogStream,
  ) {}

  @Post()
  @ApiOperation({
    operationId: 'createLogStream',
    summary: 'Create a log stream',
    description: "Delivers the tenant's audit logs, at least once and in chain order, to an HTTPS endpoint, syslog, Splunk HEC or Datadog",
  })
  @RequirePermission('log:stream')
  @ApiBody({ type: CreateLogStreamDto, examples: LOG_STREAM_BODY_EXAMPLES })
  @ApiCreatedResponse({ type: CreatedLogStreamResponse })
  async create(
    @CurrentPrincipal() principal: Principal,
    @ValidatedBody() dto: CreateLogStreamDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<CreatedLogStreamResponse> {
    const { stream, signingSecret } = await this.createStream.execute(principal, dto);
    res.location(`/logs/streams/${stream.id}`);
    return { ...toLogStreamResponse(await this.getStream.execute(principal, stream.id)), ...(signingSecret ? { signing_secret: signingSecret } : {}) };
  }

  @Get()
  @ApiOperation({ operationId: 'listLogStreams', summary: 'List log streams, with their state and lag' })
  @RequirePermission('log:stream')
  @ApiOkResponse({ type: LogStreamListResponse })
  async list(@CurrentPrincipal() principal: Principal, @ValidatedQuery() query: PagingQueryDto): Promise<PaginatedEnvelope<LogStreamResponse>> {
    const now = new Date();
    return envelope(await this.listStreams.execute(principal, toPageQuery(query)), (status) => toLogStreamResponse(status, now));
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getLogStream', summary: 'Get a log stream, with its state and lag' })
  @RequirePermission('log:stream')
  @ApiOkResponse({ type: LogStreamResponse })
  async get(@CurrentPrincipal() principal: Principal, @Param('id', UuidParamPipe) id: string): Promise<LogStreamResponse> {
    return toLogStreamResponse(await this.getStream.execute(principal, id));
  }

  @Patch(':id')
  @ApiOperation({ operationId: 'patchLogStream', summary: 'Change a log stream (JSON merge patch, RFC 7396); a failing stream is retried at once' })
  @RequirePermission('log:stream')
  @ApiConsumes('application/merge-patch+json')
  @ApiBody({ type: PatchLogStreamDto })
  @ApiOkResponse({ type: LogStreamResponse })
  async patch(
    @CurrentPrincipal() principal: Principal,
    @Param('id', UuidParamPipe) id: string,
    @ValidatedBody() dto: PatchLogStreamDto,
  ): Promise<LogStreamResponse> {
    await this.updateStream.execute(principal, id, dto);
    return toLogStreamResponse(await this.getStream.execute(principal, id));
  }

  @Post(':id/pause')
  @HttpCode(200)
  @ApiOperation({ operationId: 'pauseLogStream', summary: 'Pause a log stream: nothing is sent until it is resumed, and nothing is skipped' })
  @RequirePermission('log:stream')
  @ApiOkResponse({ type: LogStreamResponse })
  async pause(@CurrentPrincipal() principal: Principal, @Param('id', UuidParamPipe) id: string): Promise<LogStreamResponse> {
    await this.pauseStream.execute(principal, id);
    return toLogStreamResponse(await this.getStream.execute(principal, id));
  }

  @Post(':id/resume')
  @HttpCode(200)
  @ApiOperation({ operationId: 'resumeLogStream', summary: 'Resume a log stream from its last acknowledged position (a failing one is retried at once)' })
  @RequirePermission('log:stream')
  @ApiOkResponse({ type: LogStreamResponse })
  async resume(@CurrentPrincipal() principal: Principal, @Param('id', UuidParamPipe) id: string): Promise<LogStreamResponse> {
    await this.resumeStream.execute(principal, id);
    return toLogStreamResponse(await this.getStream.execute(principal, id));
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteLogStream', summary: 'Delete a log stream' })
  @RequirePermission('log:stream')
  @ApiNoContentResponse()
  async remove(@CurrentPrincipal() principal: Principal, @Param('id', UuidParamPipe) id: string): Promise<void> {
    await this.deleteStream.execute(principal, id);
  }
}
