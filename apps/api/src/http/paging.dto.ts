import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { Page, PageQuery } from '@gatehouse/domain';

/**
 * A query integer is plain decimal digits: `0x10`, `1e1`, `+1`, ` 1` or `1.0` stay strings, which `@IsInt` refuses
 * (Number() would have read them all as numbers), and so do digits beyond 2^53 - 1, which no number holds exactly.
 */
export const QueryInt = () =>
  Transform(({ value }) => (typeof value === 'string' && /^[0-9]+$/.test(value) && Number.isSafeInteger(Number(value)) ? Number(value) : value));

const PAGE_MESSAGE = { message: `must be an integer from 1 to ${Number.MAX_SAFE_INTEGER}` };

/** Repeated query parameters (`id=a&id=b`) arrive as an array, a single one as a string. */
export const AsArray = () => Transform(({ value }) => (value === undefined ? undefined : Array.isArray(value) ? value : [value]));

/** `size` and the `start` cursor: keyset paging alone (GET /v2/tokens), and the base of every list. */
export class KeysetPagingQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20 })
  @IsOptional()
  @QueryInt()
  @IsInt({ message: 'must be an integer from 1 to 100' })
  @Min(1, { message: 'must be an integer from 1 to 100' })
  @Max(100, { message: 'must be an integer from 1 to 100' })
  size?: number;

  // A token cursor holds a token id (up to 400 characters) in base64url.
  @ApiPropertyOptional({ description: 'Opaque cursor from `pagination.next`: keyset paging', maxLength: 1000 })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  start?: string;
}

/** `page`, `size` and the `start` cursor of CONTRACT.md section 1, shared by every list. */
export class PagingQueryDto extends KeysetPagingQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, default: 1 })
  @IsOptional()
  @QueryInt()
  @IsInt(PAGE_MESSAGE)
  @Min(1, PAGE_MESSAGE)
  page?: number;
}

/** A list that may also be narrowed to given ids (`id=a&id=b`). */
export class IdFilteredPagingQueryDto extends PagingQueryDto {
  @ApiPropertyOptional({ type: [String], format: 'uuid' })
  @IsOptional()
  @AsArray()
  @IsArray()
  @ArrayMaxSize(100)
  @IsUUID('all', { each: true })
  id?: string[];
}

export function toPageQuery(dto: PagingQueryDto): PageQuery {
  return { page: dto.page ?? 1, size: dto.size ?? 20, start: dto.start };
}

/** The `pagination` member of every list (CONTRACT.md section 1). */
export class PaginationResponse {
  @ApiPropertyOptional({ type: 'integer', description: 'Absent with `start` (keyset paging)' }) total_items?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'Absent with `start`' }) page_number?: number;
  @ApiProperty({ type: 'integer' }) page_size: number;
  @ApiPropertyOptional({ type: 'integer', description: 'Absent with `start`' }) total_pages?: number;
  @ApiPropertyOptional({ description: 'Present while a further page exists: pass it as `start` for the page after' }) next?: string;
}

export interface PaginatedEnvelope<T> {
  pagination: {
    total_items?: number;
    page_number?: number;
    page_size: number;
    total_pages?: number;
    next?: string;
  };
  data: T[];
}

export function envelope<T, R>(page: Page<T>, map: (item: T, index: number) => R): PaginatedEnvelope<R> {
  const pagination: PaginatedEnvelope<R>['pagination'] = { page_size: page.size };
  if (page.totalItems !== undefined && page.page !== undefined) {
    pagination.total_items = page.totalItems;
    pagination.page_number = page.page;
    pagination.total_pages = Math.ceil(page.totalItems / page.size);
  }
  if (page.next) pagination.next = page.next;
  return { pagination, data: page.items.map(map) };
}
