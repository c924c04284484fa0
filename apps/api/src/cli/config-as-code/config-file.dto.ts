import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsIn, IsObject, IsOptional, IsString, MinLength, ValidateNested } from 'class-validator';
import { UpdateApplicationDto } from '../../applications/applications.dto';
import { RateLimitDto, RateLimitProperty } from '../../rate-limits/rate-limit.dto';
import { MANAGED_APPLICATION_TYPES, ManagedApplicationType } from './model';

// The shape of gatehouse.yaml, checked by the API's own class-validator DTOs where the file says what a request body
// says (an application's grant, access rules, rate limits), so the file takes exactly what the API takes. Unknown
// keys are refused with their path, like unknown fields of a request body. The rules beyond the shape (names, the
// permission catalogue, rule scopes, URLs) are the domain's, applied in config-file.ts.

export const CONFIG_FILE_VERSION = 1;

const MUST_BE_MAPPING = { message: 'must be a mapping' };

/** A transform's code, inline or from a file relative to the YAML file: exactly one of the two. */
export class TransformFileDto {
  @IsOptional()
  @IsString()
  code?: string;

  @IsOptional()
  @IsString()
  @MinLength(1)
  code_file?: string;
}

/** An application: what PUT /applications/{id} takes, and its type (never expiring). Never a key. */
export class FileApplicationDto extends UpdateApplicationDto {
  @IsIn(MANAGED_APPLICATION_TYPES, { message: `must be one of ${MANAGED_APPLICATION_TYPES.join(', ')} (expiring applications are not declared)` })
  type: ManagedApplicationType;
}

export class FileProxyDto {
  @IsString()
  name: string;

  @IsString()
  destination_url: string;

  @IsOptional()
  @IsBoolean()
  require_auth?: boolean;

  /** The name of an application (in the file or in the tenant) whose identity the transforms' `svc` client uses. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  application?: string;

  // Checked apart, member by member (config-file.ts): its names are data, `toString` and `__proto__` included.
  @IsOptional()
  @IsObject(MUST_BE_MAPPING)
  configuration?: Record<string, string>;

  @IsOptional()
  @IsObject(MUST_BE_MAPPING)
  @ValidateNested()
  @Type(() => TransformFileDto)
  request_transform?: TransformFileDto;

  @IsOptional()
  @IsObject(MUST_BE_MAPPING)
  @ValidateNested()
  @Type(() => TransformFileDto)
  response_transform?: TransformFileDto;

  @RateLimitProperty('Invocations of this proxy, counted across all its callers; absent: unlimited')
  rate_limit?: RateLimitDto | null;
}

export class ConfigFileDto {
  @IsIn([CONFIG_FILE_VERSION], { message: `must be ${CONFIG_FILE_VERSION}` })
  version: number;

  @IsOptional()
  @IsArray({ message: 'must be a list ([] for none)' })
  @ValidateNested({ each: true })
  @Type(() => FileApplicationDto)
  applications?: FileApplicationDto[];

  @IsOptional()
  @IsArray({ message: 'must be a list ([] for none)' })
  @ValidateNested({ each: true })
  @Type(() => FileProxyDto)
  proxies?: FileProxyDto[];
}
