import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import {
  CreateApplication,
  DeleteApplication,
  GetApplication,
  ListApplications,
  Principal,
  RegenerateApplicationKey,
  UpdateApplication,
  ValidationError,
} from '@gatehouse/domain';
import { CurrentPrincipal, RequirePermission } from '../auth/auth.decorators';
import { envelope, PaginatedEnvelope, toPageQuery } from '../http/paging.dto';
import { UuidParamPipe } from '../http/validation';
import { toRateLimit } from '../rate-limits/rate-limit.dto';
import {
  ApplicationResponse,
  CreateApplicationDto,
  ListApplicationsQueryDto,
  toApplicationResponse,
  toRule,
  UpdateApplicationDto,
} from './applications.dto';

@ApiTags('applications')
@ApiSecurity('api-key')
@Controller('applications')
export class ApplicationsController {
  constructor(
    private readonly createApplication: CreateApplication,
    private readonly listApplications: ListApplications,
    private readonly getApplication: GetApplication,
    private readonly updateApplication: UpdateApplication,
    private readonly regenerateKey: RegenerateApplicationKey,
    private readonly deleteApplication: DeleteApplication,
  ) {}

  @Post()
  @RequirePermission('application:create')
  @ApiCreatedResponse({ type: ApplicationResponse })
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() dto: CreateApplicationDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ApplicationResponse> {
    const { application, key } = await this.createApplication.execute(principal, {
      name: dto.name,
      type: dto.type,
      permissions: dto.permissions,
      rules: dto.rules?.map(toRule),
      // An explicit null asks for the default, as an omitted field does (new Date(null) would be 1970).
      expiresAt: dto.expires_at == null ? undefined : parseInstant(dto.expires_at),
      canCreateExpiringApplications: dto.can_create_expiring_applications,
      rateLimit: toRateLimit(dto.rate_limit),
    });
    res.location(`/applications/${application.id}`);
    return toApplicationResponse(application, key);
  }

  @Get()
  @RequirePermission('application:read')
  async list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: ListApplicationsQueryDto,
  ): Promise<PaginatedEnvelope<ApplicationResponse>> {
    const page = await this.listApplications.execute(principal, { ids: query.id, types: query.type }, toPageQuery(query));
    return envelope(page, (app) => toApplicationResponse(app));
  }

  // Declared before :id so that "key" is never taken for an id.
  @Get('key')
  @RequirePermission('application:read')
  @ApiOkResponse({ type: ApplicationResponse })
  async byKey(@CurrentPrincipal() principal: Principal): Promise<ApplicationResponse> {
    return toApplicationResponse(await this.getApplication.execute(principal, principal.applicationId));
  }

  @Get(':id')
  @RequirePermission('application:read')
  @ApiOkResponse({ type: ApplicationResponse })
  async get(@CurrentPrincipal() principal: Principal, @Param('id', UuidParamPipe) id: string): Promise<ApplicationResponse> {
    return toApplicationResponse(await this.getApplication.execute(principal, id));
  }

  @Put(':id')
  @RequirePermission('application:update')
  @ApiOkResponse({ type: ApplicationResponse })
  async update(
    @CurrentPrincipal() principal: Principal,
    @Param('id', UuidParamPipe) id: string,
    @Body() dto: UpdateApplicationDto,
  ): Promise<ApplicationResponse> {
    const app = await this.updateApplication.execute(principal, id, {
      name: dto.name,
      permissions: dto.permissions,
      rules: dto.rules?.map(toRule),
      canCreateExpiringApplications: dto.can_create_expiring_applications,
      rateLimit: toRateLimit(dto.rate_limit),
    });
    return toApplicationResponse(app);
  }

  @Post(':id/regenerate')
  @HttpCode(200)
  @RequirePermission('application:update')
  @ApiOkResponse({ type: ApplicationResponse })
  async regenerate(@CurrentPrincipal() principal: Principal, @Param('id', UuidParamPipe) id: string): Promise<ApplicationResponse> {
    const { application, key } = await this.regenerateKey.execute(principal, id);
    return toApplicationResponse(application, key);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('application:delete')
  @ApiNoContentResponse()
  async remove(@CurrentPrincipal() principal: Principal, @Param('id', UuidParamPipe) id: string): Promise<void> {
    await this.deleteApplication.execute(principal, id);
  }
}

function parseInstant(value: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw ValidationError.single('expires_at', 'must be an ISO 8601 date-time');
  return date;
}
