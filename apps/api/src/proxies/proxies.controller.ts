import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query, Res } from '@nestjs/common';
import { ApiConsumes, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CreateProxy, DeleteProxy, GetProxy, ListProxies, PatchProxy, Principal, ReplaceProxy } from '@gatehouse/domain';
import { CurrentPrincipal, RequirePermission } from '../auth/auth.decorators';
import { envelope, PaginatedEnvelope, toPageQuery } from '../http/paging.dto';
import { UuidParamPipe } from '../http/validation';
import {
  ListProxiesQueryDto,
  PatchProxyDto,
  ProxyBodyDto,
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
  @RequirePermission('proxy:create')
  @ApiCreatedResponse({ type: ProxyResponse })
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() dto: ProxyBodyDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ProxyResponse> {
    const proxy = await this.createProxy.execute(principal, toProxyInput(dto));
    res.location(`/proxies/${proxy.id}`);
    return toProxyResponse(proxy, { created: true });
  }

  @Get()
  @RequirePermission('proxy:read')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListProxiesQueryDto): Promise<PaginatedEnvelope<ProxyResponse>> {
    const page = await this.listProxies.execute(principal, { ids: query.id, name: query.name }, toPageQuery(query));
    return envelope(page, (proxy) => toProxyResponse(proxy));
  }

  @Get(':id')
  @RequirePermission('proxy:read')
  @ApiOkResponse({ type: ProxyResponse })
  async get(@CurrentPrincipal() principal: Principal, @Param('id', UuidParamPipe) id: string): Promise<ProxyResponse> {
    return toProxyResponse(await this.getProxy.execute(principal, id));
  }

  @Put(':id')
  @RequirePermission('proxy:update')
  @ApiOkResponse({ type: ProxyResponse })
  async replace(
    @CurrentPrincipal() principal: Principal,
    @Param('id', UuidParamPipe) id: string,
    @Body() dto: ProxyBodyDto,
  ): Promise<ProxyResponse> {
    return toProxyResponse(await this.replaceProxy.execute(principal, id, toProxyInput(dto)));
  }

  @Patch(':id')
  @RequirePermission('proxy:update')
  @ApiConsumes('application/merge-patch+json')
  @ApiOkResponse({ type: ProxyResponse })
  async patch(
    @CurrentPrincipal() principal: Principal,
    @Param('id', UuidParamPipe) id: string,
    @Body() dto: PatchProxyDto,
  ): Promise<ProxyResponse> {
    return toProxyResponse(await this.patchProxy.execute(principal, id, toProxyPatch(dto)));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('proxy:delete')
  @ApiNoContentResponse()
  async remove(@CurrentPrincipal() principal: Principal, @Param('id', UuidParamPipe) id: string): Promise<void> {
    await this.deleteProxy.execute(principal, id);
  }
}
