import { Controller, Get, Put } from '@nestjs/common';
import { ApiBody, ApiHideProperty, ApiOkResponse, ApiOperation, ApiProperty, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min, ValidateIf } from 'class-validator';
import { actorOf, GetTenant, MAX_LOG_RETENTION_DAYS, Principal, SetLogRetention } from '@gatehouse/domain';
import { CurrentPrincipal, RequirePermission } from '../auth/auth.decorators';
import { ValidatedBody } from '../http/validation';

const RETENTION = {
  type: 'integer',
  nullable: true,
  minimum: 1,
  maximum: MAX_LOG_RETENTION_DAYS,
  description:
    "How many days the tenant's audit logs are kept; null: no period of its own (the installation's LOG_RETENTION_DAYS applies, else they are kept forever). The worker removes older logs in bounded batches, behind a signed retention anchor (GET /logs/retention-anchor) the trail verifies from",
} as const;

export class TenantSettingsDto {
  @ApiProperty(RETENTION)
  @ValidateIf((o: TenantSettingsDto) => o.log_retention_days !== null)
  @IsInt({ message: 'log_retention_days must be a whole number of days, or null (no period of its own)' })
  @Min(1)
  @Max(MAX_LOG_RETENTION_DAYS)
  log_retention_days: number | null;

  /** Read-only (what GET answers): accepted so that a GET's body can be sent back, and ignored. */
  @ApiHideProperty()
  @IsOptional()
  @ValidateIf((o: TenantSettingsDto) => o.effective_log_retention_days !== null)
  @IsInt({ message: 'effective_log_retention_days is read-only; when sent back it must be a whole number of days or null' })
  effective_log_retention_days?: number | null;
}

export class TenantSettingsResponse {
  @ApiProperty(RETENTION) log_retention_days: number | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    readOnly: true,
    description:
      "The period that applies: the tenant's own, else the installation's LOG_RETENTION_DAYS, else null (kept forever). Read-only: ignored when sent back in PUT",
  })
  effective_log_retention_days: number | null;
}

function toSettingsResponse(days: number | null, installationDays: number | undefined): TenantSettingsResponse {
  return { log_retention_days: days, effective_log_retention_days: days ?? installationDays ?? null };
}

/** The caller's tenant's settings: its audit logs' retention period, its own and the one that applies. */
@ApiTags('tenant')
@ApiSecurity('api-key')
@Controller('tenant/settings')
export class TenantSettingsController {
  constructor(
    private readonly getTenant: GetTenant,
    private readonly setLogRetention: SetLogRetention,
  ) {}

  @Get()
  @ApiOperation({ operationId: 'getTenantSettings', summary: "Get the tenant's settings" })
  @RequirePermission('tenant:read')
  @ApiOkResponse({ type: TenantSettingsResponse })
  async get(@CurrentPrincipal() principal: Principal): Promise<TenantSettingsResponse> {
    const tenant = await this.getTenant.execute(principal.tenantId);
    return toSettingsResponse(tenant.logRetentionDays ?? null, this.setLogRetention.defaultDays);
  }

  @Put()
  @ApiOperation({ operationId: 'updateTenantSettings', summary: "Replace the tenant's settings (its audit logs' retention period); audited" })
  @RequirePermission('tenant:update')
  @ApiBody({ type: TenantSettingsDto })
  @ApiOkResponse({ type: TenantSettingsResponse })
  async update(@CurrentPrincipal() principal: Principal, @ValidatedBody() dto: TenantSettingsDto): Promise<TenantSettingsResponse> {
    const days = await this.setLogRetention.execute(principal.tenantId, dto.log_retention_days, actorOf(principal));
    return toSettingsResponse(days, this.setLogRetention.defaultDays);
  }
}
