import { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { decodeCursor, PageQuery } from '@gatehouse/domain';

/**
 * Orders newest first and selects one page plus one row (which tells whether a next page exists):
 * after the `start` cursor when given, else by offset. Needs an index on (tenant_id, created_at, id).
 */
export function applyKeysetPage<T extends ObjectLiteral>(qb: SelectQueryBuilder<T>, alias: string, page: PageQuery): SelectQueryBuilder<T> {
  if (page.start !== undefined) {
    const cursor = decodeCursor(page.start);
    // `created_at <= cursorAt` is implied by the row comparison, but only a plain comparison prunes time partitions:
    // with it a deep page of the logs reads the partitions at or before its cursor, not every newer one as well.
    qb.andWhere(`${alias}.created_at <= :cursorAt AND (${alias}.created_at, ${alias}.id) < (:cursorAt, :cursorId)`, {
      cursorAt: cursor.createdAt,
      cursorId: cursor.id,
    });
  } else {
    // A page far past the end is still just empty (CONTRACT.md 1); PostgreSQL needs a finite bigint, and no table reaches this.
    qb.offset(Math.min((page.page - 1) * page.size, Number.MAX_SAFE_INTEGER));
  }
  return qb
    .orderBy(`${alias}.created_at`, 'DESC')
    .addOrderBy(`${alias}.id`, 'DESC')
    .limit(page.size + 1);
}
