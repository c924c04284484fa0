import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, Max, MaxLength, Min, MinLength, ValidateNested } from 'class-validator';
import {
  AccessRule,
  Application,
  APPLICATION_TYPES,
  ApplicationType,
  CONDITION_ATTRIBUTES,
  CONDITION_OPERATORS,
  MAX_NAME_LENGTH,
  MAX_KEY_OVERLAP_SECONDS,
  MAX_PERMISSIONS,
  PERMISSIONS,
  RULE_TRANSFORMS,
} from '@gatehouse/domain';
import { DATE_OR_DATE_TIME_SCHEMA, IsDateOrDateTime, IsDateTime } from '../http/date-fields';
import { PreparedJson } from '../http/prepared-json';
import { AsArray, IdFilteredPagingQueryDto, PaginationResponse, QueryInt } from '../http/paging.dto';
import { RateLimitDto, RateLimitProperty, rateLimitResponse } from '../rate-limits/rate-limit.dto';

export class AccessRuleConditionDto {
  @ApiProperty({ enum: CONDITION_ATTRIBUTES })
  @IsIn(CONDITION_ATTRIBUTES)
  attribute: (typeof CONDITION_ATTRIBUTES)[number];

  @ApiProperty({ enum: CONDITION_OPERATORS })
  @IsIn(CONDITION_OPERATORS)
  operator: (typeof CONDITION_OPERATORS)[number];

  @ApiProperty({ maxLength: 1000 })
  @IsString()
  @MinLength(1)
  @MaxLength(1000)
  value: string;
}

export class AccessRuleDto {
  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string;

  @ApiProperty({ type: 'integer', minimum: 1, description: 'Starts at 1; a higher value means lower precedence' })
  @IsInt()
  priority: number;

  @ApiPropertyOptional({ example: '/pci/high/', description: 'Required for public and private applications' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  container?: string;

  @ApiPropertyOptional({ type: [AccessRuleConditionDto], description: 'Required for expiring applications, only there' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  // ValidateNested passes an array item that is itself an array without looking into it.
  @IsObject({ each: true, message: 'each condition must be an object' })
  @ValidateNested({ each: true })
  @Type(() => AccessRuleConditionDto)
  conditions?: AccessRuleConditionDto[];

  @ApiProperty({ enum: RULE_TRANSFORMS })
  @IsIn(RULE_TRANSFORMS)
  transform: (typeof RULE_TRANSFORMS)[number];

  @ApiProperty({ type: [String], enum: PERMISSIONS.map((p) => p.type) })
  @IsArray()
  @ArrayMaxSize(MAX_PERMISSIONS)
  @IsString({ each: true })
  permissions: string[];
}

class ApplicationGrantDto {
  @ApiProperty({ maxLength: MAX_NAME_LENGTH })
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_NAME_LENGTH)
  name: string;

  @ApiPropertyOptional({ type: [String], enum: PERMISSIONS.map((p) => p.type), maxItems: MAX_PERMISSIONS, nullable: true, description: 'null: none' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_PERMISSIONS)
  @IsString({ each: true })
  permissions?: string[];

  @ApiPropertyOptional({ type: [AccessRuleDto], nullable: true, description: 'null: none' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  // ValidateNested passes an array item that is itself an array without looking into it.
  @IsObject({ each: true, message: 'each rule must be an object' })
  @ValidateNested({ each: true })
  @Type(() => AccessRuleDto)
  rules?: AccessRuleDto[];

  @ApiPropertyOptional({ type: Boolean, nullable: true, description: 'Only for private applications; null: false' })
  @IsOptional()
  @IsBoolean()
  can_create_expiring_applications?: boolean;

  @RateLimitProperty("Requests this key may make; absent or null: the tenant's default, if the operator set one, else unlimited")
  rate_limit?: RateLimitDto | null;
}

export class CreateApplicationDto extends ApplicationGrantDto {
  @ApiProperty({ enum: APPLICATION_TYPES })
  @IsIn(APPLICATION_TYPES)
  type: ApplicationType;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Only for expiring applications; default (also for null) now + 1 minute, at most 24 hours ahead',
  })
  @IsOptional()
  @IsDateTime()
  expires_at?: string;
}

export class UpdateApplicationDto extends ApplicationGrantDto {}

/** Request examples of the OpenAPI document; a test sends each to the API and expects it accepted. */
export const CREATE_APPLICATION_EXAMPLES = {
  private: {
    summary: 'A private application with an access rule',
    value: {
      name: 'payments backend',
      type: 'private',
      permissions: ['token:create', 'token:read'],
      rules: [{ description: 'Reveal high-value cards', priority: 1, container: '/pci/high/', transform: 'reveal', permissions: ['token:read'] }],
    },
  },
  expiring: {
    summary: 'An expiring application with a condition',
    value: {
      name: 'one-off reveal',
      type: 'expiring',
      permissions: ['token:read'],
      rules: [{ priority: 1, conditions: [{ attribute: 'id', operator: 'equals', value: 'tok_123' }], transform: 'reveal', permissions: ['token:read'] }],
    },
  },
  management: { summary: 'A management application', value: { name: 'auditor', type: 'management', permissions: ['log:read', 'application:read'] } },
};

export const UPDATE_APPLICATION_EXAMPLES = {
  rename: { summary: 'Rename and narrow the permissions', value: { name: 'payments backend (read only)', permissions: ['token:read'] } },
};

export class ListApplicationsQueryDto extends IdFilteredPagingQueryDto {
  @ApiPropertyOptional({ type: [String], enum: APPLICATION_TYPES })
  @IsOptional()
  @AsArray()
  @IsArray()
  @IsIn(APPLICATION_TYPES, { each: true })
  type?: ApplicationType[];

  @ApiPropertyOptional({
    ...DATE_OR_DATE_TIME_SCHEMA,
    description: 'Only applications whose key has not been used since this instant (a date alone: its midnight UTC), never-used ones included: keys to retire',
  })
  @IsOptional()
  @IsDateOrDateTime()
  unused_since?: string;
}

export class AccessRuleResponse {
  @ApiPropertyOptional() description?: string;
  @ApiProperty({ type: 'integer' }) priority: number;
  @ApiPropertyOptional() container?: string;
  @ApiPropertyOptional({ type: [AccessRuleConditionDto] }) conditions?: AccessRuleConditionDto[];
  @ApiProperty({ enum: RULE_TRANSFORMS }) transform: string;
  @ApiProperty({ type: [String] }) permissions: string[];
}

export class ApplicationResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tenant_id: string;
  @ApiProperty() name: string;
  @ApiPropertyOptional({ description: 'Only in the create and regenerate responses' }) key?: string;
  @ApiProperty({ enum: APPLICATION_TYPES }) type: string;
  @ApiProperty({ type: [String] }) permissions: string[];
  @ApiProperty({ type: [AccessRuleResponse] }) rules: AccessRuleResponse[];
  @ApiPropertyOptional({ format: 'uuid' }) created_by?: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiPropertyOptional({ format: 'uuid' }) modified_by?: string;
  @ApiPropertyOptional({ format: 'date-time' }) modified_at?: string;
  @ApiPropertyOptional({ format: 'date-time' }) expires_at?: string;
  @ApiPropertyOptional() can_create_expiring_applications?: boolean;
  @ApiPropertyOptional({ type: RateLimitDto, description: "The application's own limit; absent: the tenant's default, if any" }) rate_limit?: RateLimitDto;
  @ApiPropertyOptional({
    format: 'date-time',
    description: 'Set by a regenerate with previous_key_expires_in_seconds: until when the key it replaced keeps working',
  })
  previous_key_expires_at?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'When the key last authenticated, to the minute (updated within about a minute); absent: never' })
  last_used_at?: string;
}

const OVERLAP_MESSAGE = { message: `must be an integer from 0 to ${MAX_KEY_OVERLAP_SECONDS}` };

/** `previous_key_expires_in_seconds`, in the query or the body of a regenerate. */
function OverlapSeconds(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'integer',
      minimum: 0,
      maximum: MAX_KEY_OVERLAP_SECONDS,
      description: `Seconds the key being replaced keeps working (0 to ${MAX_KEY_OVERLAP_SECONDS}); 0 or absent: it stops at once`,
    }),
    IsOptional(),
    IsInt(OVERLAP_MESSAGE),
    Min(0, OVERLAP_MESSAGE),
    Max(MAX_KEY_OVERLAP_SECONDS, OVERLAP_MESSAGE),
  );
}

/** `POST /applications/{id}/regenerate` may name the overlap in its query... */
export class RegenerateKeyQueryDto {
  @OverlapSeconds()
  @QueryInt()
  previous_key_expires_in_seconds?: number;
}

/** ...or in its (optional) body. */
export class RegenerateKeyDto {
  @OverlapSeconds()
  previous_key_expires_in_seconds?: number;
}

export class ApplicationListResponse {
  @ApiProperty({ type: PaginationResponse }) pagination: PaginationResponse;
  @ApiProperty({ type: [ApplicationResponse] }) data: ApplicationResponse[];
}

export function toRule(dto: AccessRuleDto): AccessRule {
  return {
    description: dto.description ?? null,
    priority: dto.priority,
    container: dto.container ?? null,
    conditions: dto.conditions ? dto.conditions.map((c) => ({ attribute: c.attribute, operator: c.operator, value: c.value })) : null,
    transform: dto.transform,
    permissions: dto.permissions,
  };
}

/** The responses of frozen applications (the key cache's entries, which GET /applications/{id} reads), made once. */
const responses = new WeakMap<Application, ApplicationResponse>();

export function toApplicationResponse(app: Application, key?: string): ApplicationResponse {
  if (key !== undefined || !Object.isFrozen(app)) return newApplicationResponse(app, key);
  let response = responses.get(app);
  if (!response) {
    response = Object.freeze(newApplicationResponse(app));
    responses.set(app, response);
  }
  return response;
}

/** toApplicationResponse serialised, once per frozen application (a cache entry): a new entry, a new serialisation. */
const serialised = new WeakMap<Application, PreparedJson>();

export function applicationJson(app: Application): PreparedJson {
  if (!Object.isFrozen(app)) return new PreparedJson(newApplicationResponse(app));
  let json = serialised.get(app);
  if (!json) {
    json = new PreparedJson(toApplicationResponse(app));
    serialised.set(app, json);
  }
  return json;
}

function newApplicationResponse(app: Application, key?: string): ApplicationResponse {
  const body: ApplicationResponse = {
    id: app.id,
    tenant_id: app.tenantId,
    name: app.name,
    ...(key ? { key } : {}),
    type: app.type,
    permissions: app.permissions,
    rules: app.rules.map(ruleResponse),
    created_at: app.createdAt.toISOString(),
  };
  if (app.createdBy) body.created_by = app.createdBy;
  if (app.modifiedBy) body.modified_by = app.modifiedBy;
  if (app.modifiedAt) body.modified_at = app.modifiedAt.toISOString();
  if (app.expiresAt) body.expires_at = app.expiresAt.toISOString();
  if (app.canCreateExpiringApplications != null) body.can_create_expiring_applications = app.canCreateExpiringApplications;
  const rateLimit = rateLimitResponse(app.rateLimit);
  if (rateLimit) body.rate_limit = rateLimit;
  if (app.previousKeyExpiresAt) body.previous_key_expires_at = app.previousKeyExpiresAt.toISOString();
  if (app.lastUsedAt) body.last_used_at = app.lastUsedAt.toISOString();
  return body;
}

function ruleResponse(rule: AccessRule): AccessRuleResponse {
  const out: AccessRuleResponse = { priority: rule.priority, transform: rule.transform, permissions: rule.permissions };
  if (rule.description != null) out.description = rule.description;
  if (rule.container != null) out.container = rule.container;
  // Built member by member, like the rule: stored rules come back from jsonb with their keys reordered, and the
  // create answer and every read must show a condition the same way.
  if (rule.conditions != null) out.conditions = rule.conditions.map((c) => ({ attribute: c.attribute, operator: c.operator, value: c.value }));
  return out;
}
