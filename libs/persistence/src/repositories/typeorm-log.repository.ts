import { EntityManager, SelectQueryBuilder } from 'typeorm';
import { ChainHead, GENESIS_HASH, Log, LogFilter, LogRepository, Page, PageQuery, pageFromRows } from '@gatehouse/domain';
import { LogEntity } from '../entities/log.entity';
import { applyKeysetPage } from './keyset-page';
import { fromStoredLogRow, STORED_LOG_COLUMNS, StoredLogRow } from './log-rows';

/** The stored logs, read (the chain writer is TypeormLogChainWriter, the checkpoints TypeormLogCheckpointRepository). */
export class TypeormLogRepository extends LogRepository {
  constructor(private readonly em: EntityManager) {
    super();
  }

  async list(tenantId: string, filter: LogFilter, page: PageQuery): Promise<Page<Log>> {
    // The count is offset mode's only; keyset pages skip it, which keeps deep pages cheap.
    const total =
      page.start === undefined ? Number((await this.matching(tenantId, filter).select('COUNT(*)', 'n').getRawOne<{ n: string }>())?.n ?? 0) : undefined;
    const rows = await applyKeysetPage(this.matching(tenantId, filter).select(STORED_LOG_COLUMNS), 'l', page).getRawMany<StoredLogRow>();
    return pageFromRows(rows.map(fromStoredLogRow), page, total);
  }

  async chainSlice(tenantId: string, filter: LogFilter, afterPosition: number, upTo: number, limit: number): Promise<Log[]> {
    const rows = await this.matching(tenantId, filter)
      .select(STORED_LOG_COLUMNS)
      .andWhere('l.seq > :afterPosition AND l.seq <= :upTo', { afterPosition, upTo })
      .orderBy('l.seq')
      .limit(limit)
      .getRawMany<StoredLogRow>();
    return rows.map(fromStoredLogRow);
  }

  /**
   * The logs of `tenantId` that match `filter` (`GET /logs` and exports alike). Read as raw rows, not entities: exports
   * read a million of them, and hydration would be most of the cost.
   */
  private matching(tenantId: string, filter: LogFilter): SelectQueryBuilder<LogEntity> {
    const qb = this.em.getRepository(LogEntity).createQueryBuilder('l').where('l.tenant_id = :tenantId', { tenantId });
    if (filter.entityType !== undefined) qb.andWhere('l.entity_type = :entityType', { entityType: filter.entityType });
    if (filter.entityId !== undefined) qb.andWhere('l.entity_id = :entityId', { entityId: filter.entityId });
    if (filter.actorId !== undefined) qb.andWhere('l.actor_id = :actorId', { actorId: filter.actorId });
    if (filter.requestId !== undefined) qb.andWhere('l.request_id = :requestId', { requestId: filter.requestId });
    if (filter.startDate !== undefined) qb.andWhere('l.created_at >= :startDate', { startDate: filter.startDate });
    if (filter.endDate !== undefined) qb.andWhere('l.created_at < :endDate', { endDate: filter.endDate });
    return qb;
  }

  async chainHead(tenantId: string): Promise<ChainHead> {
    const [row] = await this.em.query(`SELECT seq::text AS seq, encode(hash, 'hex') AS hash FROM log_chains WHERE tenant_id = $1`, [tenantId]);
    return row ? { tenantId, position: Number(row.seq), hash: row.hash } : { tenantId, position: 0, hash: GENESIS_HASH };
  }

  async highestPosition(tenantId: string): Promise<number> {
    const [row] = await this.em.query(`SELECT coalesce(max(seq), 0)::text AS n FROM logs WHERE tenant_id = $1`, [tenantId]);
    return Number((row as { n: string }).n);
  }
}
