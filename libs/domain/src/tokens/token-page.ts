import { ValidationError } from '../shared/domain-error';
import { Page } from '../shared/page';
import { TOKEN_ID_PATTERN } from './token';
import { TokenPageQuery } from './token.repository';

/** A token list's position (`created_at DESC, id DESC`); ids are the tenant's own strings, not UUIDs. */
export interface TokenCursor {
  createdAt: Date;
  id: string;
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function encodeTokenCursor(cursor: TokenCursor): string {
  return Buffer.from(`${cursor.createdAt.toISOString()}|${cursor.id}`, 'utf8').toString('base64url');
}

export function decodeTokenCursor(value: string): TokenCursor {
  const text = Buffer.from(value, 'base64url').toString('utf8');
  const [iso, id, ...rest] = text.split('|');
  const createdAt = new Date(iso ?? '');
  if (
    rest.length > 0 ||
    !id ||
    !TOKEN_ID_PATTERN.test(id) ||
    !ISO_INSTANT.test(iso ?? '') ||
    Number.isNaN(createdAt.getTime()) ||
    createdAt.toISOString() !== iso
  ) {
    throw ValidationError.single('start', 'is not a valid cursor');
  }
  return { createdAt, id };
}

/** The page from `size + 1` rows (the extra one only says that a next page exists). */
export function tokenPageFromRows<T extends { createdAt: Date; id: string }>(rows: T[], query: TokenPageQuery): Page<T> {
  const items = rows.slice(0, query.size);
  const last = items[items.length - 1];
  return { items, size: query.size, next: rows.length > query.size && last ? encodeTokenCursor(last) : undefined };
}
