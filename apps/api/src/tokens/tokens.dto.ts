import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsDefined, IsIn, IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import {
  MAX_CONTAINER_LENGTH,
  MAX_CONTAINERS,
  MAX_EXPRESSION_LENGTH,
  MAX_METADATA_ENTRIES,
  MAX_METADATA_VALUE_LENGTH,
  MAX_TOKEN_DATA_BYTES,
  MaskTemplate,
  TOKEN_TYPES,
  TokenInput,
  TokenPatch,
  TokenType,
  TokenView,
} from '@gatehouse/domain';
import { IsDateTime } from '../http/date-fields';
import { AsArray, KeysetPagingQueryDto } from '../http/paging.dto';

// Shapes and types only; the rules (type validation, lengths, containers, expressions) live in the domain, so that
// POST /tokens, PATCH and every token request of POST /tokenize are held to the same ones.
const MUST_BE_OBJECT = { message: 'must be an object' };
const DATA_DOC = `The sensitive value: any JSON for \`token\`, an object for \`card\` and \`bank\`, a string for the other types; at most ${MAX_TOKEN_DATA_BYTES} bytes of JSON. Stored encrypted; returned only as the caller's access rule decides.`;
const MASK_DOC =
  'A Liquid expression (or an object or array of them) rendered from the data, e.g. `{{ data | reveal_last: 4 }}`; null: no mask (a `mask` rule then redacts)';
// Any JSON value: `oneOf` so that the document does not say `object` (the property's TypeScript type is `unknown`).
const ANY_JSON = {
  oneOf: [
    { type: 'object', additionalProperties: true },
    { type: 'array', items: {} },
    { type: 'string', nullable: true },
    { type: 'number' },
    { type: 'boolean' },
  ],
};
const METADATA_SCHEMA = {
  type: 'object',
  additionalProperties: { type: 'string', maxLength: MAX_METADATA_VALUE_LENGTH },
  maxProperties: MAX_METADATA_ENTRIES,
  description: 'Non-sensitive string map, stored in plaintext and searchable',
} as const;
const MASK_SCHEMA = {
  oneOf: [{ type: 'string' }, { type: 'object', additionalProperties: true }, { type: 'array', items: {} }],
  nullable: true,
  description: MASK_DOC,
};
const CONTAINERS_SCHEMA: ApiPropertyOptions = {
  type: [String],
  maxItems: MAX_CONTAINERS,
  description: `Where the token lives for access rules (e.g. /pci/high/); default: the type's container; each at most ${MAX_CONTAINER_LENGTH} characters`,
};

/** `containers`: an array of strings (the domain checks each); null is the default, as absent is. */
const ContainersProperty = () =>
  applyDecorators(
    ApiPropertyOptional({ ...CONTAINERS_SCHEMA, nullable: true }),
    IsOptional(),
    IsArray(),
    ArrayMaxSize(MAX_CONTAINERS),
    IsString({ each: true }),
  );

export class CreateTokenDto {
  @ApiPropertyOptional({
    description:
      '1 to 400 characters of A-Z, a-z, 0-9, _ and -, unique in the tenant (409 otherwise), or an alias expression such as `{{ data | alias_preserve_format }}`; default: a UUID',
    maxLength: MAX_EXPRESSION_LENGTH,
  })
  @IsOptional()
  @IsString()
  id?: string;

  @ApiProperty({ enum: TOKEN_TYPES })
  @IsIn(TOKEN_TYPES)
  type: TokenType;

  @ApiProperty({ description: DATA_DOC, ...ANY_JSON })
  @IsDefined()
  data: unknown;

  @ApiPropertyOptional(MASK_SCHEMA)
  @IsOptional()
  mask?: MaskTemplate | null;

  @ContainersProperty()
  containers?: string[];

  @ApiPropertyOptional({ ...METADATA_SCHEMA, nullable: true })
  @IsOptional()
  @IsObject(MUST_BE_OBJECT)
  metadata?: Record<string, string>;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: MAX_EXPRESSION_LENGTH,
    description: "What the fingerprint is computed from; default: the type's (e.g. `{{ data.number }}` for card); null: no fingerprint",
  })
  @IsOptional()
  @IsString()
  fingerprint_expression?: string | null;

  @ApiPropertyOptional({
    type: Boolean,
    nullable: true,
    description: 'Return the existing token of the same type and fingerprint instead of creating one; null: false',
  })
  @IsOptional()
  @IsBoolean()
  deduplicate_token?: boolean;

  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true, description: 'Unreadable from this instant, then deleted' })
  @IsOptional()
  @IsDateTime()
  expires_at?: string | null;
}

/** PATCH /tokens/{id}, an RFC 7396 merge patch. */
export class PatchTokenDto {
  @ApiPropertyOptional({ description: `${DATA_DOC} Objects are merged member by member (null removes a member).`, ...ANY_JSON })
  @IsOptional()
  data?: unknown;

  @ApiPropertyOptional(MASK_SCHEMA)
  @IsOptional()
  mask?: MaskTemplate | null;

  @ContainersProperty()
  containers?: string[];

  @ApiPropertyOptional({
    ...METADATA_SCHEMA,
    additionalProperties: { type: 'string', nullable: true },
    nullable: true,
    description: 'Merged member by member; null removes a member, or (for the whole map) all of them',
  })
  @IsOptional()
  @IsObject(MUST_BE_OBJECT)
  metadata?: Record<string, string | null> | null;

  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true, description: 'null: never expires' })
  @IsOptional()
  @IsDateTime()
  expires_at?: string | null;
}

/** GET /v2/tokens; `metadata.<key>=<value>` filters are read apart (any key), see TokensController.list. */
export class ListTokensQueryDto extends KeysetPagingQueryDto {
  /** `metadata.<key>=<value>` (StrictQuery lets these through; the route reads them). */
  static readonly queryNamePrefixes = ['metadata.'];

  @ApiPropertyOptional({ description: 'Tokens with a container starting with this' })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_CONTAINER_LENGTH)
  container?: string;

  @ApiPropertyOptional({ type: [String], enum: TOKEN_TYPES })
  @IsOptional()
  @AsArray()
  @IsArray()
  @ArrayMaxSize(TOKEN_TYPES.length)
  @IsIn(TOKEN_TYPES, { each: true })
  type?: TokenType[];

  @ApiPropertyOptional({ description: 'Tokens with this fingerprint' })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  fingerprint?: string;
}

export class TokenExtrasResponse {
  @ApiProperty({ description: 'Whether a deduplicated create returned an existing token' }) deduplicated: boolean;
}

export class TokenResponse {
  @ApiProperty() id: string;
  @ApiProperty({ format: 'uuid' }) tenant_id: string;
  @ApiProperty({ enum: TOKEN_TYPES }) type: TokenType;
  @ApiPropertyOptional({ description: "Present as the caller's rule decides: the data (reveal) or the mask's value (mask); absent (redact)", ...ANY_JSON })
  data?: unknown;
  @ApiPropertyOptional(MASK_SCHEMA) mask?: MaskTemplate;
  @ApiProperty({ type: [String] }) containers: string[];
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'Absent when a deduplicated create returns a token the caller may not read',
  })
  metadata?: Record<string, string>;
  @ApiPropertyOptional() fingerprint?: string;
  @ApiPropertyOptional() fingerprint_expression?: string;
  @ApiPropertyOptional({ format: 'uuid' }) created_by?: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiPropertyOptional({ format: 'uuid' }) modified_by?: string;
  @ApiPropertyOptional({ format: 'date-time' }) modified_at?: string;
  @ApiPropertyOptional({ format: 'date-time' }) expires_at?: string;
  @ApiPropertyOptional({ type: TokenExtrasResponse, description: 'On create responses' }) _extras?: TokenExtrasResponse;
}

export class TokenPaginationResponse {
  @ApiProperty({ type: 'integer' }) page_size: number;
  @ApiPropertyOptional({ description: 'Present while a further page exists: pass it as `start` for the page after' }) next?: string;
}

export class TokenListResponse {
  @ApiProperty({ type: TokenPaginationResponse }) pagination: TokenPaginationResponse;
  @ApiProperty({ type: [TokenResponse] }) data: TokenResponse[];
}

export const CREATE_TOKEN_EXAMPLES = {
  card: {
    summary: 'A card (default container /pci/high/, masked to its first six and last four digits)',
    value: { type: 'card', data: { number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '123' }, metadata: { customer: 'c_42' } },
  },
  ssn: { summary: 'A social security number with a caller-chosen id', value: { id: 'ssn_customer_42', type: 'social_security_number', data: '123-45-6789' } },
};

function date(value: string | null | undefined): Date | null | undefined {
  return value === undefined ? undefined : value === null ? null : new Date(value);
}

export function toTokenInput(dto: CreateTokenDto): TokenInput {
  return {
    id: dto.id,
    type: dto.type,
    data: dto.data,
    mask: dto.mask,
    containers: dto.containers,
    metadata: dto.metadata,
    fingerprintExpression: dto.fingerprint_expression,
    deduplicateToken: dto.deduplicate_token === true,
    expiresAt: date(dto.expires_at),
  };
}

export function toTokenPatch(dto: PatchTokenDto): TokenPatch {
  const patch: TokenPatch = {};
  if (dto.data !== undefined) patch.data = dto.data;
  if (dto.mask !== undefined) patch.mask = dto.mask;
  if (dto.containers !== undefined) patch.containers = dto.containers;
  if (dto.metadata !== undefined) patch.metadata = dto.metadata;
  if (dto.expires_at !== undefined) patch.expiresAt = date(dto.expires_at);
  return patch;
}

/** The wire form of a token as the caller may see it (TokenView). */
export function toTokenResponse(view: TokenView): TokenResponse {
  const { token } = view;
  const body = { id: token.id, tenant_id: token.tenantId, type: token.type } as TokenResponse;
  if (view.data) body.data = view.data.value;
  if (token.mask !== null) body.mask = token.mask;
  body.containers = token.containers;
  if (view.showMetadata) body.metadata = token.metadata;
  if (token.fingerprint !== null) body.fingerprint = token.fingerprint;
  if (token.fingerprintExpression !== null) body.fingerprint_expression = token.fingerprintExpression;
  if (token.createdBy) body.created_by = token.createdBy;
  body.created_at = token.createdAt.toISOString();
  if (token.modifiedBy) body.modified_by = token.modifiedBy;
  if (token.modifiedAt) body.modified_at = token.modifiedAt.toISOString();
  if (token.expiresAt) body.expires_at = token.expiresAt.toISOString();
  if (view.deduplicated !== undefined) body._extras = { deduplicated: view.deduplicated };
  return body;
}

/** A tokenize answer: the body's shape with each token request replaced by its token. */
export function toTokenizeResponse(value: unknown): unknown {
  if (value instanceof TokenView) return toTokenResponse(value);
  if (Array.isArray(value)) return value.map(toTokenizeResponse);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toTokenizeResponse(v)]));
  return value;
}
