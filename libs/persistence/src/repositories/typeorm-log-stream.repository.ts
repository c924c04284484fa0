import { EntityManager } from 'typeorm';
import {
  ActorType,
  AuditOperation,
  decodeCursor,
  Log,
  LogStream,
  LogStreamKind,
  LogStreamRepository,
  LogStreamSecrets,
  LogStreamStatus,
  Page,
  PageQuery,
  pageFromRows,
  SentBatch,
  VaultCrypto,
} from '@gatehouse/domain';
import { logStreamSecretsAad } from '../vault/sealed-columns';

const STREAM_COLUMNS = `"id", "tenant_id", "name", "kind", "settings", "secrets_sealed", "paused", "position"::text AS "position",
  "delivered"::text AS "delivered", "redelivered"::text AS "redelivered", "last_synced_at", "last_error", "last_error_at", "failures",
  "created_by", "created_at", "modified_by", "modified_at"`;

interface StreamRow {
  id: string;
  tenant_id: string;
  name: string;
  kind: LogStreamKind;
  settings: LogStream['settings'];
  secrets_sealed: Buffer | null;
  paused: boolean;
  position: string;
  delivered: string;
  redelivered: string;
  last_synced_at: Date | null;
  last_error: string | null;
  last_error_at: Date | null;
  failures: number;
  created_by: string | null;
  created_at: Date;
  modified_by: string | null;
  modified_at: Date;
}

interface LogRow {
  id: string;
  tenant_id: string;
  actor_id: string | null;
  actor_type: ActorType | null;
  entity_type: string;
  entity_id: string;
  operation: AuditOperation;
  message: string;
  created_at: Date;
  request_id: string | null;
  source_ip: string | null;
  user_agent: string | null;
  position: string;
  hash: string;
}

// A tenant's committed logs in chain order, by the (tenant_id, seq) unique index: the streams' own read of the trail.
const READ_AFTER = `SELECT id, tenant_id, actor_id, actor_type, entity_type, entity_id, operation, message, created_at, request_id,
  source_ip, user_agent, seq::text AS position, encode(hash, 'hex') AS hash
  FROM logs WHERE tenant_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`;
// The same within the positions $2 + 1 to $2 + $3. A chain's committed positions have no gap, so these are the next
// logs; and a bounded range is read in index order whatever the planner's statistics say (the open-ended query,
// on a freshly written tenant whose statistics lag, read every log after the position and sorted them, for each batch).
const READ_RANGE = READ_AFTER.replace('seq > $2', 'seq > $2 AND seq <= $2::bigint + $3');

// Due: not paused, past its backoff, behind its tenant's chain head, and leased by nobody, by a lease that expired, or
// by this owner (a run of its that could not release it, PostgreSQL gone under it: its runs never overlap, so nothing of
// its own is in flight at a claim, and waiting for its own lease to expire would hold the stream back for nothing).
// SKIP LOCKED: two workers claiming at once take different streams; the lease then keeps them apart until it expires.
const CLAIM_DUE = `UPDATE log_streams s SET lease_owner = $1, lease_expires_at = now() + ($3::int * interval '1 millisecond')
  WHERE s.id IN (
    SELECT d.id FROM log_streams d JOIN log_chains c ON c.tenant_id = d.tenant_id
    WHERE NOT d.paused AND d.next_attempt_at <= now() AND c.seq > d."position"
      AND (d.lease_owner IS NULL OR d.lease_expires_at < now() OR d.lease_owner = $1)
    ORDER BY d.next_attempt_at LIMIT $2 FOR UPDATE OF d SKIP LOCKED)
  RETURNING ${STREAM_COLUMNS}`;

// A batch ($3 to $4) about to leave: whatever of it an earlier attempt already sent is a redelivery (its
// acknowledgement was lost). NULL positions change nothing (GREATEST and LEAST skip NULLs; the sum is then 0).
const SENT = `sent_position = GREATEST(s.sent_position, $4::bigint),
  redelivered = s.redelivered + coalesce(GREATEST(0, LEAST($4::bigint, s.sent_position) - $3::bigint + 1), 0)`;
// The row as it was before the update (locked, so that the update sees the same), and what it had sent up to.
const LOCKED = `(SELECT id, sent_position FROM log_streams WHERE id = $1 FOR UPDATE) before`;
const SENT_BEFORE = `before.sent_position::text AS sent_before`;

/** Log streams over PostgreSQL; their credentials sealed by the vault (aad `log-stream-secrets:<tenant>:<id>`). */
export class TypeormLogStreamRepository extends LogStreamRepository {
  constructor(
    private readonly em: EntityManager,
    private readonly vault: VaultCrypto,
  ) {
    super();
  }

  async insert(stream: LogStream): Promise<void> {
    await this.em.query(
      `INSERT INTO log_streams (id, tenant_id, name, settings, secrets_sealed, paused, modified_by, modified_at, kind, "position", sent_position,
         created_by, created_at) VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8, $9, $10, $10, $11, $12)`,
      [...(await this.configuration(stream)), stream.kind, stream.position, stream.createdBy, stream.createdAt],
    );
  }

  async update(stream: LogStream, retryNow: boolean): Promise<boolean> {
    const [, affected] = (await this.em.query(
      `UPDATE log_streams SET name = $3, settings = $4::jsonb, secrets_sealed = $5, paused = $6, modified_by = $7, modified_at = $8,
         next_attempt_at = CASE WHEN $9 THEN now() ELSE next_attempt_at END, failures = CASE WHEN $9 THEN 0 ELSE failures END
       WHERE id = $1 AND tenant_id = $2`,
      [...(await this.configuration(stream)), retryNow],
    )) as [unknown, number];
    return affected > 0;
  }

  /** What a management write sets, as $1 to $8: id, tenant, name, settings, sealed secrets, paused, modified by and at. */
  private async configuration(stream: LogStream): Promise<unknown[]> {
    const { id, tenantId, name, settings, paused, modifiedBy, modifiedAt } = stream;
    return [id, tenantId, name, JSON.stringify(settings), await this.seal(stream), paused, modifiedBy, modifiedAt];
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const [, affected] = (await this.em.query(`DELETE FROM log_streams WHERE tenant_id = $1 AND id = $2`, [tenantId, id])) as [unknown, number];
    return affected > 0;
  }

  async findById(tenantId: string, id: string): Promise<LogStream | null> {
    const rows: StreamRow[] = await this.em.query(`SELECT ${STREAM_COLUMNS} FROM log_streams WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
    return rows[0] ? this.toStream(rows[0]) : null;
  }

  async list(tenantId: string, page: PageQuery): Promise<Page<LogStream>> {
    const params: unknown[] = [tenantId, page.size + 1];
    let where = 'tenant_id = $1';
    let offset = '';
    if (page.start !== undefined) {
      const cursor = decodeCursor(page.start);
      params.push(cursor.createdAt, cursor.id);
      where += ' AND (created_at, id) < ($3, $4)';
    } else {
      offset = ` OFFSET ${Math.min((page.page - 1) * page.size, Number.MAX_SAFE_INTEGER)}`;
    }
    const rows: StreamRow[] = await this.em.query(
      `SELECT ${STREAM_COLUMNS} FROM log_streams WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $2${offset}`,
      params,
    );
    const total = page.start === undefined ? await this.count(tenantId) : undefined;
    return pageFromRows(await Promise.all(rows.map((r) => this.toStream(r))), page, total);
  }

  async count(tenantId: string): Promise<number> {
    const [row] = await this.em.query(`SELECT count(*)::int AS n FROM log_streams WHERE tenant_id = $1`, [tenantId]);
    return Number(row?.n ?? 0);
  }

  async headPosition(tenantId: string): Promise<number> {
    const [row] = await this.em.query(`SELECT seq::text AS seq FROM log_chains WHERE tenant_id = $1`, [tenantId]);
    return row ? Number(row.seq) : 0;
  }

  async status(streams: LogStream[]): Promise<LogStreamStatus[]> {
    return Promise.all(
      streams.map(async (stream) => {
        const [row] = await this.em.query(
          `SELECT coalesce((SELECT seq FROM log_chains WHERE tenant_id = $1), 0)::text AS head,
             (SELECT created_at FROM logs WHERE tenant_id = $1 AND seq = $2::bigint + 1) AS oldest`,
          [stream.tenantId, stream.position],
        );
        return { stream, headPosition: Number(row.head), oldestPendingAt: row.oldest ?? null };
      }),
    );
  }

  async claimDue(owner: string, limit: number, leaseMs: number): Promise<LogStream[]> {
    const [rows] = (await this.em.query(CLAIM_DUE, [owner, limit, leaseMs])) as [StreamRow[], number];
    return Promise.all(rows.map((r) => this.toStream(r)));
  }

  async readAfter(tenantId: string, position: number, limit: number): Promise<Log[]> {
    let rows: LogRow[] = await this.em.query(READ_RANGE, [tenantId, position, limit]);
    // Nothing there: caught up, or behind logs that retention removed (the next ones are further on).
    if (rows.length === 0) rows = await this.em.query(READ_AFTER, [tenantId, position, limit]);
    return rows.map(toLog);
  }

  async markSent(streamId: string, owner: string, batch: SentBatch): Promise<number | null> {
    return this.sentBefore(
      await this.em.query(`UPDATE log_streams s SET ${SENT} FROM ${LOCKED} WHERE s.id = before.id AND s.lease_owner = $2 RETURNING ${SENT_BEFORE}`, [
        streamId,
        owner,
        batch.firstPosition,
        batch.lastPosition,
      ]),
    );
  }

  async acknowledge(
    streamId: string,
    owner: string,
    acknowledged: { position: number; count: number },
    leaseMs: number,
    next?: SentBatch,
  ): Promise<number | null> {
    // Without a next batch its positions are NULL, and SENT leaves sent_position and redelivered as they are.
    return this.sentBefore(
      await this.em.query(
        `UPDATE log_streams s SET "position" = $5, delivered = s.delivered + $6, last_synced_at = now(), last_error = NULL,
           last_error_at = NULL, failures = 0, lease_expires_at = now() + ($7::int * interval '1 millisecond'), ${SENT}
         FROM ${LOCKED} WHERE s.id = before.id AND s.lease_owner = $2 AND s."position" < $5 RETURNING ${SENT_BEFORE}`,
        [streamId, owner, next?.firstPosition ?? null, next?.lastPosition ?? null, acknowledged.position, acknowledged.count, leaseMs],
      ),
    );
  }

  async recordFailure(streamId: string, owner: string, error: string, retryAt: Date, sentBefore?: number): Promise<void> {
    // A batch the receiver surely did not take is not "sent": sending it again is no redelivery.
    await this.em.query(
      `UPDATE log_streams SET last_error = $3, last_error_at = now(), failures = failures + 1, next_attempt_at = $4,
         lease_owner = NULL, lease_expires_at = NULL, sent_position = coalesce($5::bigint, sent_position)
       WHERE id = $1 AND lease_owner = $2`,
      [streamId, owner, error, retryAt, sentBefore ?? null],
    );
  }

  async release(streamId: string, owner: string): Promise<void> {
    await this.em.query(`UPDATE log_streams SET lease_owner = NULL, lease_expires_at = NULL WHERE id = $1 AND lease_owner = $2`, [streamId, owner]);
  }

  private sentBefore([rows]: [{ sent_before: string }[], number]): number | null {
    return rows[0] ? Number(rows[0].sent_before) : null;
  }

  private async seal(stream: LogStream): Promise<Buffer | null> {
    if (Object.keys(stream.secrets).length === 0) return null;
    return this.vault.seal(stream.tenantId, Buffer.from(JSON.stringify(stream.secrets)), logStreamSecretsAad(stream.tenantId, stream.id));
  }

  private async toStream(row: StreamRow): Promise<LogStream> {
    const secrets: LogStreamSecrets =
      row.secrets_sealed === null
        ? {}
        : (JSON.parse((await this.vault.open(row.tenant_id, row.secrets_sealed, logStreamSecretsAad(row.tenant_id, row.id))).toString()) as LogStreamSecrets);
    return {
      id: row.id,
      tenantId: row.tenant_id,
      name: row.name,
      kind: row.kind,
      settings: row.settings,
      secrets,
      paused: row.paused,
      position: Number(row.position),
      lastSyncedAt: row.last_synced_at,
      lastError: row.last_error,
      lastErrorAt: row.last_error_at,
      failures: row.failures,
      delivered: Number(row.delivered),
      redelivered: Number(row.redelivered),
      createdBy: row.created_by,
      createdAt: row.created_at,
      modifiedBy: row.modified_by,
      modifiedAt: row.modified_at,
    };
  }
}

function toLog(row: LogRow): Log {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    actorId: row.actor_id,
    actorType: row.actor_type,
    entityType: row.entity_type,
    entityId: row.entity_id,
    operation: row.operation,
    message: row.message,
    createdAt: row.created_at,
    ...(row.request_id === null ? {} : { requestId: row.request_id }),
    ...(row.source_ip === null ? {} : { sourceIp: row.source_ip }),
    ...(row.user_agent === null ? {} : { userAgent: row.user_agent }),
    position: Number(row.position),
    hash: row.hash,
  };
}
