import { EntityManager } from 'typeorm';
import { ChainHead, LogRetentionRepository, RetentionAnchor } from '@gatehouse/domain';

/** Retention over the logs (its migration lets the logs' trigger allow exactly these removals). */
export class TypeormLogRetentionRepository extends LogRetentionRepository {
  constructor(private readonly em: EntityManager) {
    super();
  }

  async tenantsWithRetention(): Promise<{ tenantId: string; days: number }[]> {
    const rows: { id: string; days: number }[] = await this.em.query(
      `SELECT id, log_retention_days AS days FROM tenants WHERE log_retention_days IS NOT NULL ORDER BY id`,
    );
    return rows.map((r) => ({ tenantId: r.id, days: r.days }));
  }

  async lockTenant(tenantId: string): Promise<boolean> {
    const [row] = await this.em.query(`SELECT pg_try_advisory_xact_lock(hashtextextended('gatehouse.log-retention:' || $1, 0)) AS locked`, [tenantId]);
    return (row as { locked: boolean }).locked;
  }

  async lastRemovable(tenantId: string, before: Date, limit: number): Promise<ChainHead | undefined> {
    // The oldest logs by position (the chain's index), then the longest run of them older than `before`.
    // (Aliased `position`: an output column named `seq` of type text would be what ORDER BY seq sorts.)
    const rows: { position: string; hash: string; old: boolean }[] = await this.em.query(
      `SELECT seq::text AS position, encode(hash, 'hex') AS hash, created_at < $2 AS old FROM logs WHERE tenant_id = $1 ORDER BY seq LIMIT $3`,
      [tenantId, before.toISOString(), limit],
    );
    let last: ChainHead | undefined;
    for (const row of rows) {
      if (!row.old) break;
      last = { tenantId, position: Number(row.position), hash: row.hash };
    }
    return last;
  }

  async remove(anchor: RetentionAnchor): Promise<number> {
    await this.em.query(
      `INSERT INTO log_retention_anchors (tenant_id, seq, hash, signed_at, key_id, signature)
       VALUES ($1, $2, decode($3, 'hex'), $4, $5, decode($6, 'base64')) ON CONFLICT (tenant_id, seq) DO NOTHING`,
      [anchor.tenantId, anchor.position, anchor.hash, anchor.signedAt.toISOString(), anchor.keyId, anchor.signature],
    );
    const [row] = await this.em.query(
      `WITH removed AS (DELETE FROM logs WHERE tenant_id = $1 AND seq <= $2 RETURNING 1) SELECT count(*)::int AS n FROM removed`,
      [anchor.tenantId, anchor.position],
    );
    return (row as { n: number }).n;
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
