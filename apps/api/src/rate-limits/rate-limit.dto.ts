import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsObject, IsOptional, Max, Min, ValidateNested } from 'class-validator';
import { MAX_RATE_LIMIT, MAX_RATE_LIMIT_WINDOW_SECONDS, RateLimit } from '@gatehouse/domain';

const LIMIT_DOC = 'Requests allowed in any window, as a burst or spread out';
const WINDOW_DOC = 'The window, in seconds';

/** `rate_limit` of an application or a proxy (absent or null: none). */
export class RateLimitDto {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: MAX_RATE_LIMIT, description: LIMIT_DOC, example: 100 })
  @IsInt()
  @Min(1)
  @Max(MAX_RATE_LIMIT)
  limit: number;

  @ApiProperty({ type: 'integer', minimum: 1, maximum: MAX_RATE_LIMIT_WINDOW_SECONDS, description: WINDOW_DOC, example: 60 })
  @IsInt()
  @Min(1)
  @Max(MAX_RATE_LIMIT_WINDOW_SECONDS)
  window_seconds: number;
}

/** `rate_limit` in a merge patch: members merge into the current limit; null clears a member (then it must be given). */
export class RateLimitPatchDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_RATE_LIMIT, description: `${LIMIT_DOC}; not null: a limit has both members` })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_RATE_LIMIT)
  limit?: number | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_RATE_LIMIT_WINDOW_SECONDS,
    description: `${WINDOW_DOC}; not null: a limit has both members`,
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_RATE_LIMIT_WINDOW_SECONDS)
  window_seconds?: number | null;
}

/**
 * The `rate_limit` member of a request body (an application's, a proxy's; `dto` is RateLimitDto, or RateLimitPatchDto
 * in a merge patch): optional, nullable, an object validated member by member. An array, or any other JSON type, is
 * refused, never read as an absent limit.
 */
export function RateLimitProperty(description: string, dto: typeof RateLimitDto | typeof RateLimitPatchDto = RateLimitDto): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ type: dto, nullable: true, description }),
    IsOptional(),
    IsObject({ message: 'must be an object' }),
    ValidateNested(),
    Type(() => dto),
  );
}

export function toRateLimit(dto: RateLimitDto | null | undefined): RateLimit | null {
  return dto ? { limit: dto.limit, windowSeconds: dto.window_seconds } : null;
}

export function rateLimitResponse(limit: RateLimit | null | undefined): RateLimitDto | undefined {
  return limit ? { limit: limit.limit, window_seconds: limit.windowSeconds } : undefined;
}
