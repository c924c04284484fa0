import { EntityManager } from 'typeorm';
import { ChainHead, LogRetentionRepository, PartitionLogs, RetentionAnchor } from '@gatehouse/domain';
import { quoted } from '../log-partitions/typeorm-log-partitions';
import { LOG_PARTITION_LOCK } from '../migrations/log-partitions.functions';

/** Held shared by every retention batch, exclusively by a partition drop: the two never run at once. */
const RETENTION_LOCK = `hashtextextended('gatehouse.log-retention', 0)`;

/** Retention over the logs (its migration lets the logs' trigger allow exactly these removals). */
export class TypeormLogRetentionRepository extends LogRetentionRepository {
  constructor(private readonly em: EntityManager) {
    super();
  }

  async tenantsWithRetention(defaultDays?: number): Promise<{ tenantId: string; days: number }[]> {
    const rows: { id: string; days: number }[] = await this.em.query(
      `SELECT id, coalesce(log_retention_days, $1::int) AS days FROM tenants WHERE coalesce(log_retention_days, $1::int) IS NOT NULL ORDER BY id`,
      [defaultDays ?? null],
    );
    return rows.map((r) => ({ tenantId: r.id, days: r.days }));
  }

  async lockTenant(tenantId: string): Promise<boolean> {
    const [row] = await this.em.query(
      `SELECT pg_try_advisory_xact_lock_shared(${RETENTION_LOCK}) AND pg_try_advisory_xact_lock(hashtextextended('gatehouse.log-retention:' || $1, 0)) AS locked`,
      [tenantId],
    );
    return (row as { locked: boolean }).locked;
  }

  async lockPartitions(): Promise<boolean> {
    const [row] = await this.em.query(`SELECT pg_try_advisory_xact_lock(${RETENTION_LOCK}) AS locked`);
    if (!(row as { locked: boolean }).locked) return false;
    await this.em.query(`SELECT pg_advisory_xact_lock(${LOG_PARTITION_LOCK})`);
    return true;
  }

  async partitionLogs(partition: string): Promise<PartitionLogs[]> {
    const table = quoted(partition);
    // SHARE: a write of a log into this partition (an old created_at) waits until the drop; reads do not.
    await this.em.query(`SET LOCAL lock_timeout = '5s'`);
    await this.em.query(`LOCK TABLE ${table} IN SHARE MODE`);
    const rows: { tenant_id: string; first: string; last: string; n: string; hash: string; days: number | null; anchored: string }[] = await this.em.query(
      `WITH p AS (SELECT tenant_id, min(seq) AS first, max(seq) AS last, count(*) AS n FROM ${table} GROUP BY tenant_id)
       SELECT p.tenant_id, p.first::text AS first, p.last::text AS last, p.n::text AS n, encode(l.hash, 'hex') AS hash,
              t.log_retention_days AS days,
              coalesce((SELECT max(a.seq) FROM log_retention_anchors a WHERE a.tenant_id = p.tenant_id), 0)::text AS anchored
       FROM p JOIN ${table} l ON l.tenant_id = p.tenant_id AND l.seq = p.last LEFT JOIN tenants t ON t.id = p.tenant_id
       ORDER BY p.tenant_id`,
    );
    return rows.map((r) => ({
      tenantId: r.tenant_id,
      first: Number(r.first),
      last: Number(r.last),
      count: Number(r.n),
      lastHash: r.hash,
      days: r.days,
      anchored: Number(r.anchored),
    }));
  }

  async lastRemovable(tenantId: string, before: Date, limit: number): Promise<ChainHead | undefined> {
    // The oldest logs by position (the chain's index), then the longest run of them older than `before` that
    // continues the newest anchor without a hole: a position missing (a log removed outside retention) is never
    // covered by an anchor, so verification still reports it.
    // (Aliased `position`: an output column named `seq` of type text would be what ORDER BY seq sorts.)
    // From past the anchor: the positions before it are gone, and their index entries (dead until a vacuum) would
    // be walked again by every batch, in every partition (10M removed back to back slowed from 50k to 4k logs/s).
    const rows: { position: string; hash: string; old: boolean; anchored: string }[] = await this.em.query(
      `WITH a AS (SELECT coalesce(max(seq), 0) AS anchored FROM log_retention_anchors WHERE tenant_id = $1)
       SELECT l.seq::text AS position, encode(l.hash, 'hex') AS hash, l.created_at < $2 AS old, a.anchored::text AS anchored
       FROM a LEFT JOIN LATERAL (SELECT seq, hash, created_at FROM logs WHERE tenant_id = $1 AND seq > a.anchored ORDER BY seq LIMIT $3) l ON true`,
      [tenantId, before.toISOString(), limit],
    );
    let last: ChainHead | undefined;
    let expected = Number(rows[0]?.anchored ?? 0) + 1;
    for (const row of rows) {
      if (!row.old || Number(row.position) !== expected++) break;
      last = { tenantId, position: Number(row.position), hash: row.hash };
    }
    return last;
  }

  async remove(anchor: RetentionAnchor): Promise<number> {
    await this.saveAnchor(anchor);
    const [row] = await this.em.query(
      // Past the previous anchor only (nothing is left before it), for the same reason as lastRemovable. Their ids go
      // from log_ids too (as with a partition drop), so retention sheds that table as well.
      `WITH removed AS (
         DELETE FROM logs WHERE tenant_id = $1 AND seq <= $2
           AND seq > (SELECT coalesce(max(seq), 0) FROM log_retention_anchors WHERE tenant_id = $1 AND seq < $2)
         RETURNING id),
       forgotten AS (DELETE FROM log_ids WHERE id IN (SELECT id FROM removed) AND tenant_id = $1)
       SELECT count(*)::int AS n FROM removed`,
      [anchor.tenantId, anchor.position],
    );
    return (row as { n: number }).n;
  }

  async saveAnchor(anchor: RetentionAnchor): Promise<void> {
    await this.em.query(
      `INSERT INTO log_retention_anchors (tenant_id, seq, hash, signed_at, key_id, signature)
       VALUES ($1, $2, decode($3, 'hex'), $4, $5, decode($6, 'base64')) ON CONFLICT (tenant_id, seq) DO NOTHING`,
      [anchor.tenantId, anchor.position, anchor.hash, anchor.signedAt.toISOString(), anchor.keyId, anchor.signature],
    );
  }

  async newestAnchor(tenantId: string): Promise<RetentionAnchor | undefined> {
    const [row] = (await this.em.query(
      `SELECT tenant_id, seq::text AS position, encode(hash, 'hex') AS hash, signed_at, key_id, encode(signature, 'base64') AS signature
       FROM log_retention_anchors WHERE tenant_id = $1 ORDER BY log_retention_anchors.seq DESC LIMIT 1`,
      [tenantId],
    )) as { tenant_id: string; position: string; hash: string; signed_at: Date; key_id: string; signature: string }[];
    if (!row) return undefined;
    // encode(…, 'base64') wraps lines every 76 characters.
    return {
      tenantId: row.tenant_id,
      position: Number(row.position),
      hash: row.hash,
      signedAt: row.signed_at,
      keyId: row.key_id,
      signature: row.signature.replace(/\s+/g, ''),
    };
  }
}
