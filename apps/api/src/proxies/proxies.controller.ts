import { Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CreateProxy, DeleteProxy, GetProxy, ListProxies, PatchProxy, Principal, ReplaceProxy } from '@gatehouse/domain';
import { CurrentPrincipal, RequirePermission } from '../auth/auth.decorators';
import { envelope, PaginatedEnvelope, toPageQuery } from '../http/paging.dto';
import { UuidParamPipe, ValidatedBody, ValidatedQuery } from '../http/validation';
import { pageWithinBytes } from './page-bytes';
import {
  ListProxiesQueryDto,
  PATCH_PROXY_EXAMPLES,
  PatchProxyDto,
  PROXY_BODY_EXAMPLES,
  ProxyBodyDto,
  ProxyListResponse,
  ProxyResponse,
  toProxyInput,
  toProxyPatch,
  toProxyResponse,
} from './proxies.dto';

@ApiTags('proxies')
@ApiSecurity('api-key')
@Controller('proxies')
export class ProxiesController {
  constructor(
    private readonly createProxy: CreateProxy,
    private readonly listProxies: ListProxies,
    private readonly getProxy: GetProxy,
    private readonly replaceProxy: ReplaceProxy,
    private readonly patchProxy: PatchProxy,
    private readonly deleteProxy: DeleteProxy,
  ) {}

  @Post()
  @ApiOperation({ operationId: 'createProxy', summary: 'Create a proxy' })
  @RequirePermission('proxy:create')
  @ApiBody({ type: ProxyBodyDto, examples: PROXY_BODY_EXAMPLES })
  @ApiCreatedResponse({ type: ProxyResponse })
  async create(
    @CurrentPrincipal() principal: Principal,
    @ValidatedBody() dto: ProxyBodyDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ProxyResponse> {
    const proxy = await this.createProxy.execute(principal, toProxyInput(dto));
    res.location(`/proxies/${proxy.id}`);
    return toProxyResponse(proxy, { created: true });
  }

  @Get()
  @ApiOperation({
    operationId: 'listProxies',
    summary: 'List proxies',
    description: 'A page carries at most 4 MiB of proxies: one cut short holds fewer than `size`, and `next` continues right after its last item',
  })
  @RequirePermission('proxy:read')
  @ApiOkResponse({ type: ProxyListResponse })
  async list(@CurrentPrincipal() principal: Principal, @ValidatedQuery() query: ListProxiesQueryDto): Promise<PaginatedEnvelope<ProxyResponse>> {
    const listed = await this.listProxies.execute(principal, { ids: query.id, name: query.name }, toPageQuery(query));
    // At most MAX_PAGE_BYTES of proxies, whatever `size` says; `next` continues where the page was cut.
    const { page, bodies } = pageWithinBytes(listed, (proxy) => toProxyResponse(proxy));
    return envelope(page, (_, i) => bodies[i]!);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getProxy', summary: 'Get a proxy' })
  @RequirePermission('proxy:read')
  @ApiOkResponse({ type: ProxyResponse })
  async get(@CurrentPrincipal() principal: Principal, @Param('id', UuidParamPipe) id: string): Promise<ProxyResponse> {
    return toProxyResponse(await this.getProxy.execute(principal, id));
  }

  @Put(':id')
  @ApiOperation({ operationId: 'replaceProxy', summary: 'Replace a proxy' })
  @RequirePermission('proxy:update')
  @ApiBody({ type: ProxyBodyDto, examples: PROXY_BODY_EXAMPLES })
  @ApiOkResponse({ type: ProxyResponse })
  async replace(@CurrentPrincipal() principal: Principal, @Param('id', UuidParamPipe) id: string, @ValidatedBody() dto: ProxyBodyDto): Promise<ProxyResponse> {
    return toProxyResponse(await this.replaceProxy.execute(principal, id, toProxyInput(dto)), writeAnswer(principal));
  }

  @Patch(':id')
  @ApiOperation({ operationId: 'patchProxy', summary: 'Change some fields of a proxy (JSON merge patch, RFC 7396)' })
  @RequirePermission('proxy:update')
  @ApiConsumes('application/merge-patch+json')
  @ApiBody({ type: PatchProxyDto, examples: PATCH_PROXY_EXAMPLES })
  @ApiOkResponse({ type: ProxyResponse })
  async patch(@CurrentPrincipal() principal: Principal, @Param('id', UuidParamPipe) id: string, @ValidatedBody() dto: PatchProxyDto): Promise<ProxyResponse> {
    return toProxyResponse(await this.patchProxy.execute(principal, id, toProxyPatch(dto)), writeAnswer(principal));
  }

  @Delete(':id')
  @ApiOperation({ operationId: 'deleteProxy', summary: 'Delete a proxy' })
  @HttpCode(204)
  @RequirePermission('proxy:delete')
  @ApiNoContentResponse()
  async remove(@CurrentPrincipal() principal: Principal, @Param('id', UuidParamPipe) id: string): Promise<void> {
    await this.deleteProxy.execute(principal, id);
  }
}

/**
 * What a PUT or PATCH answers: the proxy as a read shows it only to a caller that may read it; otherwise (proxy:update
 * alone) without its key, code and configuration, which `PATCH {}` would have handed out. A create answers it whole:
 * all of it was sent by the caller but the key, which it asked to be made.
 */
function writeAnswer(principal: Principal): { withoutSecrets: boolean } {
  return { withoutSecrets: !principal.permissions.has('proxy:read') };
}
