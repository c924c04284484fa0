import { Controller, Delete, Get, HttpCode, Param, Post, Put, Res } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
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
import { sendPreparedJson } from '../http/prepared-json';
import { UuidParamPipe, ValidatedBody, ValidatedQuery } from '../http/validation';
import { toRateLimit } from '../rate-limits/rate-limit.dto';
import {
  applicationJson,
  ApplicationListResponse,
  ApplicationResponse,
  CREATE_APPLICATION_EXAMPLES,
  CreateApplicationDto,
  ListApplicationsQueryDto,
  RegenerateKeyDto,
  RegenerateKeyQueryDto,
  toApplicationResponse,
  toRule,
  UPDATE_APPLICATION_EXAMPLES,
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
  @ApiOperation({ operationId: 'createApplication', summary: 'Create an application and its key' })
  @RequirePermission('application:create')
  @ApiBody({ type: CreateApplicationDto, examples: CREATE_APPLICATION_EXAMPLES })
  @ApiCreatedResponse({ type: ApplicationResponse })
  async create(
    @CurrentPrincipal() principal: Principal,
    @ValidatedBody() dto: CreateApplicationDto,
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
  @ApiOperation({ operationId: 'listApplications', summary: 'List applications' })
  @RequirePermission('application:read')
  @ApiOkResponse({ type: ApplicationListResponse })
  async list(@CurrentPrincipal() principal: Principal, @ValidatedQuery() query: ListApplicationsQueryDto): Promise<PaginatedEnvelope<ApplicationResponse>> {
    const filter = { ids: query.id, types: query.type, unusedSince: query.unused_since === undefined ? undefined : new Date(query.unused_since) };
    const page = await this.listApplications.execute(principal, filter, toPageQuery(query));
    return envelope(page, (app) => toApplicationResponse(app));
  }

  // Declared before :id so that "key" is never taken for an id.
  @Get('key')
  @ApiOperation({ operationId: 'getApplicationOfKey', summary: 'Get the application of the calling key' })
  @RequirePermission('application:read')
  @ApiOkResponse({ type: ApplicationResponse })
  async byKey(@CurrentPrincipal() principal: Principal, @Res() res: Response): Promise<void> {
    sendPreparedJson(res, applicationJson(await this.getApplication.execute(principal, principal.applicationId)));
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getApplication', summary: 'Get an application' })
  @RequirePermission('application:read')
  @ApiOkResponse({ type: ApplicationResponse })
  // Answered from the serialisation kept with the cached application (applicationJson), byte for byte what returning
  // its response object would send (sendPreparedJson).
  async get(@CurrentPrincipal() principal: Principal, @Param('id', UuidParamPipe) id: string, @Res() res: Response): Promise<void> {
    sendPreparedJson(res, applicationJson(await this.getApplication.execute(principal, id)));
  }

  @Put(':id')
  @ApiOperation({ operationId: 'updateApplication', summary: 'Replace the name, permissions and rules of an application' })
  @RequirePermission('application:update')
  @ApiBody({ type: UpdateApplicationDto, examples: UPDATE_APPLICATION_EXAMPLES })
  @ApiOkResponse({ type: ApplicationResponse })
  async update(
    @CurrentPrincipal() principal: Principal,
    @Param('id', UuidParamPipe) id: string,
    @ValidatedBody() dto: UpdateApplicationDto,
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
  @ApiOperation({ operationId: 'regenerateApplicationKey', summary: 'Regenerate the key of an application' })
  @HttpCode(200)
  @RequirePermission('application:update')
  @ApiOkResponse({ type: ApplicationResponse })
  // The body is optional: the overlap may come in the query instead, or not at all.
  @ApiBody({ type: RegenerateKeyDto, required: false })
  async regenerate(
    @CurrentPrincipal() principal: Principal,
    @Param('id', UuidParamPipe) id: string,
    @ValidatedQuery() query: RegenerateKeyQueryDto,
    @ValidatedBody() body: RegenerateKeyDto,
  ): Promise<ApplicationResponse> {
    const inQuery = query.previous_key_expires_in_seconds;
    const inBody = body?.previous_key_expires_in_seconds;
    if (inQuery !== undefined && inBody !== undefined && inQuery !== inBody) {
      throw ValidationError.single('previous_key_expires_in_seconds', 'is given in the query and in the body with different values');
    }
    const { application, key } = await this.regenerateKey.execute(principal, id, { previousKeyExpiresInSeconds: inQuery ?? inBody });
    return toApplicationResponse(application, key);
  }

  @Delete(':id')
  @ApiOperation({ operationId: 'deleteApplication', summary: 'Delete an application' })
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
