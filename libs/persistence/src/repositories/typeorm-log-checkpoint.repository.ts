import { EntityManager } from 'typeorm';
import { ChainHead, LogCheckpoint, LogCheckpointRepository, Page, PageQuery, ValidationError } from '@gatehouse/domain';

/** The signed checkpoints over the chains' heads (table log_checkpoints). */
export class TypeormLogCheckpointRepository extends LogCheckpointRepository {
  constructor(private readonly em: EntityManager) {
    super();
  }

  async headsToCheckpoint(limit: number): Promise<ChainHead[]> {
    const rows: { tenant_id: string; seq: string; hash: string }[] = await this.em.query(
      `SELECT h.tenant_id, h.seq::text AS seq, encode(h.hash, 'hex') AS hash FROM log_chains h
       WHERE h.seq > coalesce((SELECT max(c.seq) FROM log_checkpoints c WHERE c.tenant_id = h.tenant_id), 0)
       ORDER BY h.tenant_id LIMIT $1`,
      [limit],
    );
    return rows.map((r) => ({ tenantId: r.tenant_id, position: Number(r.seq), hash: r.hash }));
  }

  async saveCheckpoints(checkpoints: LogCheckpoint[]): Promise<number> {
    if (checkpoints.length === 0) return 0;
    const [row] = await this.em.query(
      `WITH inserted AS (
         INSERT INTO log_checkpoints (tenant_id, seq, hash, signed_at, key_id, signature)
         SELECT t, s, decode(h, 'hex'), a, k, decode(sig, 'base64')
         FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::timestamptz[], $5::text[], $6::text[]) AS v(t, s, h, a, k, sig)
         ON CONFLICT (tenant_id, seq) DO NOTHING RETURNING 1)
       SELECT count(*)::int AS n FROM inserted`,
      [
        checkpoints.map((c) => c.tenantId),
        checkpoints.map((c) => c.position),
        checkpoints.map((c) => c.hash),
        checkpoints.map((c) => c.signedAt.toISOString()),
        checkpoints.map((c) => c.keyId),
        checkpoints.map((c) => c.signature),
      ],
    );
    return (row as { n: number }).n;
  }

  async checkpointSlice(tenantId: string, afterPosition: number, upTo: number, limit: number): Promise<LogCheckpoint[]> {
    const rows: CheckpointRow[] = await this.em.query(`${SELECT_CHECKPOINTS} WHERE tenant_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4`, [
      tenantId,
      afterPosition,
      upTo,
      limit,
    ]);
    return rows.map(fromCheckpointRow);
  }

  async listCheckpoints(tenantId: string, page: PageQuery): Promise<Page<LogCheckpoint>> {
    const below = page.start === undefined ? undefined : decodePositionCursor(page.start);
    const offset = page.start === undefined ? Math.min((page.page - 1) * page.size, Number.MAX_SAFE_INTEGER) : 0;
    const rows: CheckpointRow[] = await this.em.query(
      `${SELECT_CHECKPOINTS} WHERE tenant_id = $1 AND ($2::bigint IS NULL OR seq < $2) ORDER BY seq DESC OFFSET $3 LIMIT $4`,
      [tenantId, below ?? null, offset, page.size + 1],
    );
    const items = rows.slice(0, page.size).map(fromCheckpointRow);
    const last = items[items.length - 1];
    const next = rows.length > page.size && last ? Buffer.from(String(last.position), 'utf8').toString('base64url') : undefined;
    if (page.start !== undefined) return { items, size: page.size, next };
    const [count] = await this.em.query(`SELECT count(*)::int AS n FROM log_checkpoints WHERE tenant_id = $1`, [tenantId]);
    return { items, size: page.size, page: page.page, totalItems: (count as { n: number }).n, next };
  }
}

const SELECT_CHECKPOINTS = `SELECT tenant_id, seq::text AS position, encode(hash, 'hex') AS hash, signed_at, key_id,
  encode(signature, 'base64') AS signature FROM log_checkpoints`;

interface CheckpointRow {
  tenant_id: string;
  position: string;
  hash: string;
  signed_at: Date;
  key_id: string;
  signature: string;
}

function fromCheckpointRow(r: CheckpointRow): LogCheckpoint {
  return {
    tenantId: r.tenant_id,
    position: Number(r.position),
    hash: r.hash,
    signedAt: r.signed_at,
    keyId: r.key_id,
    // encode(…, 'base64') wraps lines every 76 characters.
    signature: r.signature.replace(/\s+/g, ''),
  };
}

function decodePositionCursor(value: string): number {
  const text = Buffer.from(value, 'base64url').toString('utf8');
  if (!/^[1-9][0-9]{0,15}$/.test(text)) throw ValidationError.single('start', 'is not a valid cursor');
  return Number(text);
}
