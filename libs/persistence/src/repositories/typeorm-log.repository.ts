import { EntityManager, SelectQueryBuilder } from 'typeorm';
import { Log, LogFilter, LogRepository, Page, PageQuery, pageFromRows } from '@gatehouse/domain';
import { LogEntity } from '../entities/log.entity';
import { applyKeysetPage } from './keyset-page';

const COLUMNS = 'id, tenant_id, actor_id, actor_type, entity_type, entity_id, operation, message, created_at';

// One statement, so one round trip and atomic without BEGIN/COMMIT. The whole batch is one JSON parameter:
// any size fits, and PostgreSQL's JSON parser is far cheaper than the driver's per-element array encoding.
// The outbox rows go first (the scalar subquery completes the DELETE before the first insert): they are the
// locks a concurrent relay takes, so both lock in the same order and cannot deadlock.
const APPEND_LOGS = `WITH delivered AS (
    DELETE FROM audit_outbox WHERE id = ANY($1::uuid[]) RETURNING 1),
  inserted AS (
    INSERT INTO logs (${COLUMNS})
    SELECT ${COLUMNS} FROM json_populate_recordset(NULL::logs, $2::json)
    WHERE (SELECT count(*) FROM delivered) >= 0
    ON CONFLICT (id) DO NOTHING
    RETURNING 1)
  SELECT count(*)::int AS n FROM inserted`;

// SKIP LOCKED: relays of several workers split the backlog instead of queueing behind one another.
const RELAY_OUTBOX = `WITH moved AS (
    DELETE FROM audit_outbox WHERE id IN (
      SELECT id FROM audit_outbox WHERE created_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
    RETURNING ${COLUMNS}),
  inserted AS (
    INSERT INTO logs (${COLUMNS}) SELECT ${COLUMNS} FROM moved ORDER BY id
    ON CONFLICT (id) DO NOTHING
    RETURNING 1)
  SELECT (SELECT count(*) FROM moved)::int AS n, (SELECT count(*) FROM inserted)::int AS inserted`;

export class TypeormLogRepository extends LogRepository {
  constructor(private readonly em: EntityManager) {
    super();
  }

  async append(logs: Log[]): Promise<number> {
    // Ids in one order everywhere: two writers inserting overlapping batches cannot deadlock.
    const unique = [...new Map(logs.map((log) => [log.id, log])).values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const ids = unique.map((l) => l.id);
    const rows = JSON.stringify(
      unique.map((l) => ({
        id: l.id,
        tenant_id: l.tenantId,
        actor_id: l.actorId,
        actor_type: l.actorType,
        entity_type: l.entityType,
        entity_id: l.entityId,
        operation: l.operation,
        message: l.message,
        created_at: l.createdAt.toISOString(),
      })),
    );
    const [row] = await this.em.query(APPEND_LOGS, [ids, rows]);
    return (row as { n: number }).n;
  }

  async relayOutbox(recordedBefore: Date, limit: number): Promise<number> {
    const [row] = await this.em.query(RELAY_OUTBOX, [recordedBefore.toISOString(), limit]);
    return (row as { n: number }).n;
  }

  async list(tenantId: string, filter: LogFilter, page: PageQuery): Promise<Page<Log>> {
    const filtered = () => where(this.em.getRepository(LogEntity).createQueryBuilder('l'), tenantId, filter);
    // The count is offset mode's only; keyset pages skip it, which keeps deep pages cheap.
    const total =
      page.start === undefined
        ? Number((await filtered().select('COUNT(*)', 'n').getRawOne<{ n: string }>())?.n ?? 0)
        : undefined;
    const rows = await applyKeysetPage(filtered(), 'l', page).getMany();
    return pageFromRows(rows, page, total);
  }
}

function where(qb: SelectQueryBuilder<LogEntity>, tenantId: string, filter: LogFilter): SelectQueryBuilder<LogEntity> {
  qb.where('l.tenant_id = :tenantId', { tenantId });
  if (filter.entityType !== undefined) qb.andWhere('l.entity_type = :entityType', { entityType: filter.entityType });
  if (filter.entityId !== undefined) qb.andWhere('l.entity_id = :entityId', { entityId: filter.entityId });
  if (filter.startDate !== undefined) qb.andWhere('l.created_at >= :startDate', { startDate: filter.startDate });
  if (filter.endDate !== undefined) qb.andWhere('l.created_at < :endDate', { endDate: filter.endDate });
  return qb;
}
