import { ValidationError } from './domain-error';

/** Offset paging (`page`, `size`) or keyset paging (`start` cursor); see CONTRACT.md section 1. */
export interface PageQuery {
  page: number;
  size: number;
  start?: string;
}

export interface Page<T> {
  items: T[];
  size: number;
  /** Present in offset mode only. */
  page?: number;
  totalItems?: number;
  /** Cursor of the page after this one, when one exists. */
  next?: string;
}

/** Position of a row in `created_at DESC, id DESC` order. */
export interface Cursor {
  createdAt: Date;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.createdAt.toISOString()}|${cursor.id}`, 'utf8').toString('base64url');
}

export function decodeCursor(value: string): Cursor {
  const invalid = () => ValidationError.single('start', 'is not a valid cursor');
  let text: string;
  try {
    text = Buffer.from(value, 'base64url').toString('utf8');
  } catch {
    throw invalid();
  }
  const [iso, id, ...rest] = text.split('|');
  const createdAt = new Date(iso ?? '');
  if (rest.length > 0 || !id || !UUID.test(id) || Number.isNaN(createdAt.getTime())) throw invalid();
  // Only what encodeCursor writes: a date PostgreSQL cannot hold (e.g. year -100000) would fail the query.
  if (!ISO_INSTANT.test(iso!) || createdAt.toISOString() !== iso) throw invalid();
  return { createdAt, id };
}

/**
 * Builds the page from `size + 1` fetched rows: the extra row only tells whether a next page exists.
 */
export function pageFromRows<T extends { createdAt: Date; id: string }>(rows: T[], query: PageQuery, totalItems?: number): Page<T> {
  const items = rows.slice(0, query.size);
  const last = items[items.length - 1];
  const next = rows.length > query.size && last ? encodeCursor(last) : undefined;
  if (query.start !== undefined) return { items, size: query.size, next };
  return { items, size: query.size, page: query.page, totalItems, next };
}
