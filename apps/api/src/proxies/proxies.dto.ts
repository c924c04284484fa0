import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsObject, IsOptional, IsString, IsUUID, MaxLength, ValidateNested } from 'class-validator';
import {
  MAX_CONFIGURATION_ENTRIES,
  MAX_CONFIGURATION_VALUE_LENGTH,
  MAX_DESTINATION_URL_LENGTH,
  MAX_PROXY_NAME_LENGTH,
  MAX_TRANSFORM_CODE_LENGTH,
  Proxy,
  ProxyInput,
  ProxyPatch,
  stringMap,
} from '@gatehouse/domain';
import { IdFilteredPagingQueryDto, PaginationResponse } from '../http/paging.dto';
import { RateLimitDto, RateLimitPatchDto, RateLimitProperty, rateLimitResponse, toRateLimit } from '../rate-limits/rate-limit.dto';

// The DTOs check shapes and types; the rules (lengths, URL policy, compilation) live in the domain, so that
// a merge patch is held to exactly the rules of a PUT body.

// An array (or any other JSON type) where an object is expected is refused, never read as an absent member.
// (`configuration` reaches its DTO as a stand-in, see StrictValidationPipe: its members are data, not fields.)
const MUST_BE_OBJECT = { message: 'must be an object' };

const TRANSFORM_CODE_DOC = `JavaScript (Node.js 16 and later, CommonJS): \`module.exports = async function (req) { ... }\`; at most ${MAX_TRANSFORM_CODE_LENGTH} characters`;

export class ProxyTransformDto {
  @ApiProperty({ description: TRANSFORM_CODE_DOC, maxLength: MAX_TRANSFORM_CODE_LENGTH })
  @IsString()
  code: string;
}

export class ApplicationRefDto {
  @ApiProperty({ format: 'uuid', description: 'A public or private application of the same tenant' })
  @IsUUID('all')
  id: string;
}

/** The body of POST /proxies and PUT /proxies/{id} (spec 4.2): the same shape. */
export class ProxyBodyDto {
  @ApiProperty({ maxLength: MAX_PROXY_NAME_LENGTH })
  @IsString()
  name: string;

  @ApiProperty({
    maxLength: MAX_DESTINATION_URL_LENGTH,
    example: 'https://api.example.com/v1',
    description: 'Absolute https:// URL without credentials, query or fragment',
  })
  @IsString()
  destination_url: string;

  @ApiPropertyOptional({ type: ProxyTransformDto, nullable: true })
  @IsOptional()
  @IsObject(MUST_BE_OBJECT)
  @ValidateNested()
  @Type(() => ProxyTransformDto)
  request_transform?: ProxyTransformDto | null;

  @ApiPropertyOptional({ type: ProxyTransformDto, nullable: true })
  @IsOptional()
  @IsObject(MUST_BE_OBJECT)
  @ValidateNested()
  @Type(() => ProxyTransformDto)
  response_transform?: ProxyTransformDto | null;

  @ApiPropertyOptional({ type: ApplicationRefDto, nullable: true, description: 'The application the transform `svc` client acts as' })
  @IsOptional()
  @IsObject(MUST_BE_OBJECT)
  @ValidateNested()
  @Type(() => ApplicationRefDto)
  application?: ApplicationRefDto | null;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', maxLength: MAX_CONFIGURATION_VALUE_LENGTH },
    maxProperties: MAX_CONFIGURATION_ENTRIES,
    nullable: true,
    description:
      "Named string values handed to transform code (`req.configuration`); any key, `toString` and `__proto__` included. At most 65,536 bytes as JSON (UTF-8), and at most 4 MiB across the tenant's proxies (400 beyond)",
  })
  @IsOptional()
  @IsObject(MUST_BE_OBJECT)
  configuration?: Record<string, string> | null;

  @ApiPropertyOptional({ type: Boolean, nullable: true, default: true, description: 'Whether invoking needs SVC-API-KEY too; null means the default' })
  @IsOptional()
  @IsBoolean()
  require_auth?: boolean | null;

  @RateLimitProperty('Invocations of this proxy, counted across all its callers; absent: unlimited')
  rate_limit?: RateLimitDto | null;
}

export class ProxyTransformPatchDto {
  @ApiPropertyOptional({ type: String, nullable: true, description: `${TRANSFORM_CODE_DOC}; null removes the transform` })
  @IsOptional()
  @IsString()
  code?: string | null;
}

export class ApplicationRefPatchDto {
  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true, description: 'null detaches the application' })
  @IsOptional()
  @IsUUID('all')
  id?: string | null;
}

/** PATCH /proxies/{id}, an RFC 7396 merge patch: a member set to null is cleared. */
export class PatchProxyDto {
  @ApiPropertyOptional({ type: String, maxLength: MAX_PROXY_NAME_LENGTH })
  @IsOptional()
  @IsString()
  name?: string | null;

  @ApiPropertyOptional({ type: String, maxLength: MAX_DESTINATION_URL_LENGTH })
  @IsOptional()
  @IsString()
  destination_url?: string | null;

  @ApiPropertyOptional({ type: ProxyTransformPatchDto, nullable: true })
  @IsOptional()
  @IsObject(MUST_BE_OBJECT)
  @ValidateNested()
  @Type(() => ProxyTransformPatchDto)
  request_transform?: ProxyTransformPatchDto | null;

  @ApiPropertyOptional({ type: ProxyTransformPatchDto, nullable: true })
  @IsOptional()
  @IsObject(MUST_BE_OBJECT)
  @ValidateNested()
  @Type(() => ProxyTransformPatchDto)
  response_transform?: ProxyTransformPatchDto | null;

  @ApiPropertyOptional({ type: ApplicationRefPatchDto, nullable: true })
  @IsOptional()
  @IsObject(MUST_BE_OBJECT)
  @ValidateNested()
  @Type(() => ApplicationRefPatchDto)
  application?: ApplicationRefPatchDto | null;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', nullable: true },
    nullable: true,
    description: 'Merged member by member; a member set to null is removed',
  })
  @IsOptional()
  @IsObject(MUST_BE_OBJECT)
  configuration?: Record<string, string | null> | null;

  @ApiPropertyOptional({ type: Boolean, nullable: true, description: 'null returns it to the default, true' })
  @IsOptional()
  @IsBoolean()
  require_auth?: boolean | null;

  @RateLimitProperty('Merged member by member; null removes the limit', RateLimitPatchDto)
  rate_limit?: RateLimitPatchDto | null;
}

export class ListProxiesQueryDto extends IdFilteredPagingQueryDto {
  @ApiPropertyOptional({ description: 'Case-insensitive substring of the name; `*` matches any run of characters' })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_PROXY_NAME_LENGTH)
  name?: string;
}

export class ProxyResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tenant_id: string;
  @ApiProperty() name: string;
  @ApiPropertyOptional({
    description:
      'Names the proxy on invocation (SVC-PROXY-KEY). Absent, as are the transforms and the configuration, from the answer to a PUT or PATCH by a caller without proxy:read',
  })
  key?: string;
  @ApiProperty() destination_url: string;
  @ApiPropertyOptional({ type: ProxyTransformDto }) request_transform?: ProxyTransformDto;
  @ApiPropertyOptional({ type: ProxyTransformDto }) response_transform?: ProxyTransformDto;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } }) configuration?: Record<string, string>;
  @ApiPropertyOptional({ format: 'uuid' }) application_id?: string;
  @ApiProperty() require_auth: boolean;
  @ApiPropertyOptional({ type: RateLimitDto, description: 'Absent: unlimited' }) rate_limit?: RateLimitDto;
  @ApiPropertyOptional({ format: 'uuid' }) created_by?: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiPropertyOptional({ format: 'uuid' }) modified_by?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'Absent from the create response' }) modified_at?: string;
}

/** Request examples of the OpenAPI document; a test sends each to the API and expects it accepted. */
export const PROXY_BODY_EXAMPLES = {
  plain: { summary: 'A proxy without transforms', value: { name: 'payments', destination_url: 'https://api.example.com/v1/' } },
  transforms: {
    summary: 'A proxy with a request transform and configuration',
    value: {
      name: 'signed payments',
      destination_url: 'https://api.example.com/v1/',
      request_transform: {
        code: "module.exports = async function (req) {\n  return { body: req.args.body, headers: { ...req.args.headers, 'x-api-key': req.configuration.API_KEY } };\n};",
      },
      configuration: { API_KEY: 'secret' },
      require_auth: true,
    },
  },
};

export const PATCH_PROXY_EXAMPLES = {
  rename: {
    summary: 'Rename, drop one configuration member, let anyone with the key invoke it',
    value: { name: 'payments v2', configuration: { API_KEY: null }, require_auth: false },
  },
  removeTransform: { summary: 'Remove the request transform', value: { request_transform: null } },
};

export class ProxyListResponse {
  @ApiProperty({ type: PaginationResponse }) pagination: PaginationResponse;
  @ApiProperty({ type: [ProxyResponse] }) data: ProxyResponse[];
}

export function toProxyInput(dto: ProxyBodyDto): ProxyInput {
  return {
    name: dto.name,
    destinationUrl: dto.destination_url,
    requestTransform: dto.request_transform ? { code: dto.request_transform.code } : null,
    responseTransform: dto.response_transform ? { code: dto.response_transform.code } : null,
    applicationId: dto.application?.id ?? null,
    configuration: dto.configuration ? stringMap(Object.entries(dto.configuration)) : null,
    requireAuth: dto.require_auth ?? null,
    rateLimit: toRateLimit(dto.rate_limit),
  };
}

export function toProxyPatch(dto: PatchProxyDto): ProxyPatch {
  const patch: ProxyPatch = {};
  if (dto.name !== undefined) patch.name = dto.name;
  if (dto.destination_url !== undefined) patch.destinationUrl = dto.destination_url;
  if (dto.request_transform !== undefined) patch.requestTransform = dto.request_transform && { code: dto.request_transform.code };
  if (dto.response_transform !== undefined) patch.responseTransform = dto.response_transform && { code: dto.response_transform.code };
  // `application: {}` names no change; `application: {id: null}` and `application: null` clear it.
  if (dto.application === null) patch.applicationId = null;
  else if (dto.application && dto.application.id !== undefined) patch.applicationId = dto.application.id;
  if (dto.configuration !== undefined) patch.configuration = dto.configuration && stringMap(Object.entries(dto.configuration));
  if (dto.require_auth !== undefined) patch.requireAuth = dto.require_auth;
  if (dto.rate_limit !== undefined) patch.rateLimit = dto.rate_limit && { limit: dto.rate_limit.limit, windowSeconds: dto.rate_limit.window_seconds };
  return patch;
}

/** The wire form (spec 2.4): `application_id` flat, `modified_at` only outside the create response. */
/**
 * `withoutSecrets`: the answer to a write by a caller that may not read proxies (no proxy:read), without what only a
 * read shows (the key, the transforms' code, the configuration): a write permission is not a read permission.
 */
export function toProxyResponse(proxy: Proxy, options: { created?: boolean; withoutSecrets?: boolean } = {}): ProxyResponse {
  const body = {
    id: proxy.id,
    tenant_id: proxy.tenantId,
    name: proxy.name,
  } as ProxyResponse;
  if (!options.withoutSecrets) body.key = proxy.key;
  body.destination_url = proxy.destinationUrl;
  if (!options.withoutSecrets) {
    if (proxy.requestTransform) body.request_transform = { code: proxy.requestTransform.code };
    if (proxy.responseTransform) body.response_transform = { code: proxy.responseTransform.code };
    if (proxy.configuration) body.configuration = proxy.configuration;
  }
  if (proxy.applicationId) body.application_id = proxy.applicationId;
  body.require_auth = proxy.requireAuth;
  const rateLimit = rateLimitResponse(proxy.rateLimit);
  if (rateLimit) body.rate_limit = rateLimit;
  if (proxy.createdBy) body.created_by = proxy.createdBy;
  body.created_at = proxy.createdAt.toISOString();
  if (proxy.modifiedBy) body.modified_by = proxy.modifiedBy;
  if (proxy.modifiedAt && !options.created) body.modified_at = proxy.modifiedAt.toISOString();
  return body;
}
