import { decodeCursor, encodeCursor, pageFromRows, PageQuery } from './page';
import { ValidationError } from './domain-error';

const ID = '0b9f6a4e-6a53-4d43-9d0e-3f1a3c9b7e21';

function rows(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    createdAt: new Date(Date.UTC(2026, 10, 21, 10, 0, 0, 1000 - i)),
  }));
}

function expectInvalidCursor(value: string) {
  let caught: unknown;
  try {
    decodeCursor(value);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ValidationError);
  expect((caught as ValidationError).fieldErrors).toEqual({ start: ['is not a valid cursor'] });
}

describe('cursors', () => {
  it('round-trips a position, keeping milliseconds', () => {
    const cursor = { createdAt: new Date('2026-11-21T10:00:00.123Z'), id: ID };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
  });

  it('is opaque url-safe text', () => {
    expect(encodeCursor({ createdAt: new Date('2026-11-21T10:00:00.123Z'), id: ID })).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it.each([
    ['empty', ''],
    ['not base64url of anything useful', 'abc'],
    ['garbage with symbols', '!!!***'],
    ['a date without an id', Buffer.from('2026-11-21T10:00:00.000Z').toString('base64url')],
    ['an id that is not a UUID', Buffer.from('2026-11-21T10:00:00.000Z|nope').toString('base64url')],
    ['a date that does not parse', Buffer.from(`tomorrow|${ID}`).toString('base64url')],
    ['extra parts', Buffer.from(`2026-11-21T10:00:00.000Z|${ID}|x`).toString('base64url')],
    ['SQL in the id', Buffer.from("2026-11-21T10:00:00.000Z|' OR 1=1 --").toString('base64url')],
    ['a year PostgreSQL cannot hold', Buffer.from(`-100000-01-01T00:00:00.000Z|${ID}`).toString('base64url')],
    ['a six-digit year', Buffer.from(`+275760-09-13T00:00:00.000Z|${ID}`).toString('base64url')],
    ['a date in another notation', Buffer.from(`Sat, 21 Nov 2026 10:00:00 GMT|${ID}`).toString('base64url')],
    ['an impossible day that Date would roll over', Buffer.from(`2026-02-31T00:00:00.000Z|${ID}`).toString('base64url')],
  ])('refuses a cursor that is %s with a ValidationError on `start`', (_, value) => expectInvalidCursor(value));
});

describe('pageFromRows', () => {
  const offset = (page: number, size: number): PageQuery => ({ page, size });

  it('uses the extra row only to say a next page exists', () => {
    const all = rows(3);
    const page = pageFromRows(all, offset(1, 2), 3);
    expect(page.items).toEqual(all.slice(0, 2));
    expect(page).toMatchObject({ size: 2, page: 1, totalItems: 3 });
    expect(decodeCursor(page.next!)).toEqual({ createdAt: all[1]!.createdAt, id: all[1]!.id });
  });

  it('has no next on the last page', () => {
    const page = pageFromRows(rows(2), offset(1, 2), 2);
    expect(page.items).toHaveLength(2);
    expect(page.next).toBeUndefined();
  });

  it('gives an empty page, without next, past the end', () => {
    const page = pageFromRows([], offset(9, 20), 3);
    expect(page).toEqual({ items: [], size: 20, page: 9, totalItems: 3, next: undefined });
  });

  it('in keyset mode carries only the size and next', () => {
    const page = pageFromRows(rows(3), { page: 1, size: 2, start: 'x' });
    expect(page.page).toBeUndefined();
    expect(page.totalItems).toBeUndefined();
    expect(page.size).toBe(2);
    expect(page.next).toBeDefined();
  });
});
