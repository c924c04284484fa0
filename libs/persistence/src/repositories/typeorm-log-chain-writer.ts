import { EntityManager } from 'typeorm';
import { AuditEvent, ChainHead, chainLogs, LogChainWriter, LogIdConflictError, LogJson, toLogJson } from '@gatehouse/domain';
import { ensurePartitionsOf, outboxDays, withLogPartitions } from '../log-partitions/typeorm-log-partitions';
import { fromHeadRow, fromLogRow, GENESIS, HeadRow, LOG_COLUMNS, LogRow } from './log-rows';

// An outbox event whose id is stored under another tenant: a conflict, left in the outbox (and not relayed). The ids of
// the logs, unique across tenants and time partitions, are in log_ids.
const NOT_TAKEN = `NOT EXISTS (SELECT 1 FROM log_ids l WHERE l.id = o.id AND l.tenant_id <> o.tenant_id)`;

// The outbox rows go first (the scalar subquery completes the DELETE before the insert): they are the locks a
// concurrent relay takes first too. Only the rows of these logs' own (id, tenant), and none in conflict. Heads of
// new tenants are created in tenant order, so two writers creating the same heads wait for each other in one order
// and cannot deadlock.
const DELIVER_AND_CREATE_HEADS = `WITH delivered AS (
    DELETE FROM audit_outbox o USING unnest($1::uuid[], $2::uuid[]) AS v(id, t)
    WHERE o.id = v.id AND o.tenant_id = v.t AND ${NOT_TAKEN} RETURNING 1)
  INSERT INTO log_chains (tenant_id, seq, hash)
  SELECT t, 0, ${GENESIS} FROM unnest($3::uuid[]) AS t WHERE (SELECT count(*) FROM delivered) >= 0 ORDER BY t
  ON CONFLICT (tenant_id) DO NOTHING`;

// The per-tenant serialisation of the chain: whoever holds a head extends that chain; the others wait for
// its commit and then read the head it left. Locked in tenant order (LockRows runs above the sort).
const SELECT_HEADS = `SELECT tenant_id, seq::text AS seq, encode(hash, 'hex') AS hash FROM log_chains`;
const LOCK_HEADS = `${SELECT_HEADS} WHERE tenant_id = ANY($1::uuid[]) ORDER BY tenant_id FOR UPDATE`;

const RELAY_CLAIM = `WITH moved AS (
    DELETE FROM audit_outbox WHERE id IN (
      SELECT id FROM audit_outbox o WHERE created_at < $1 AND ${NOT_TAKEN} ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
    RETURNING ${LOG_COLUMNS})
  SELECT * FROM moved`;
// What the relay leaves (see NOT_TAKEN); read once its backlog is taken, when few rows are left to look at.
const OUTBOX_CONFLICTS = `SELECT id, tenant_id FROM audit_outbox o WHERE created_at < $1 AND NOT (${NOT_TAKEN}) ORDER BY created_at LIMIT 100`;

type Conflict = LogIdConflictError['conflicts'][number];

/**
 * The chain-append engine: appends audit events to their tenants' hash chains (from the queue's jobs, and from the
 * outbox by the relay), idempotently by log id. See docs/audit-trail.md for the two write paths.
 */
export class TypeormLogChainWriter extends LogChainWriter {
  /** The chain heads this writer last wrote or read: where `append`'s one-statement path chains after. */
  private readonly knownHeads = new KnownHeads();
  /** Writes of this writer in flight that decide a tenant's head, by tenant: a next batch waits for them. */
  private readonly settling = new Map<string, Promise<unknown>>();

  constructor(private readonly em: EntityManager) {
    super();
  }

  async append(logs: AuditEvent[]): Promise<number> {
    // A created_at without a partition: created, then written (see withLogPartitions). Inside a caller's transaction,
    // which a refused statement would abort, created first.
    if (this.em.queryRunner !== undefined)
      await ensurePartitionsOf(
        this.em,
        logs.map((l) => l.createdAt),
      );
    return withLogPartitions(
      this.em,
      async () => logs.map((l) => l.createdAt),
      () => this.appendOnce(logs),
    );
  }

  private async appendOnce(logs: AuditEvent[]): Promise<number> {
    // The same id twice in one batch is one log (the first). The same id under another tenant is written after it
    // (a rare second round): a duplicate if stored under its own tenant by then, else a conflict.
    const conflicts: Conflict[] = [];
    let inserted = 0;
    for (let rest = logs; rest.length > 0;) {
      const tenantOf = new Map<string, string>();
      const later: AuditEvent[] = [];
      const unique = rest.filter((log) => {
        const tenant = tenantOf.get(log.id);
        if (tenant === undefined) return tenantOf.set(log.id, log.tenantId);
        if (tenant !== log.tenantId) later.push(log);
        return false;
      });
      inserted += await this.write(unique, conflicts);
      rest = later;
    }
    // After the others committed: the caller fails what holds these ids (the worker: their jobs, unrecoverably).
    if (conflicts.length > 0) throw new LogIdConflictError(conflicts);
    return inserted;
  }

  /** `logs` (unique ids) written; the ids found stored under another tenant are added to `conflicts`. */
  private async write(unique: AuditEvent[], conflicts: Conflict[]): Promise<number> {
    if (unique.length === 0) return 0;
    const tenants = [...new Set(unique.map((l) => l.tenantId))].sort();
    // Inside a caller's transaction a refused statement would abort that transaction: the locked path only.
    if (this.em.queryRunner !== undefined) return this.appendLocked(unique, tenants, conflicts);
    const pending = new Set(tenants.map((t) => this.settling.get(t)).filter((p) => p !== undefined));
    if (pending.size === 0 && tenants.every((t) => this.knownHeads.has(t))) {
      return (await this.appendAfterKnownHeads(unique, tenants)) ?? (await this.appendLocked(unique, tenants, conflicts));
    }
    // A head this writer does not know yet, or one that a write of its own still in flight will decide: this batch
    // waits for those writes, then is chained after the heads they leave. Chained after a guess instead, it would
    // only be refused and locked as well (a tenant's first batches, or those after a refusal, while a lane has two
    // flushes in flight). Registered before any wait, so that the batches after it wait for it in turn, until its own
    // heads are known: once chained (the one-statement path), or once written (the locked one).
    let chained!: () => void;
    this.settleBefore(tenants, new Promise<void>((resolve) => (chained = resolve)));
    try {
      if (pending.size > 0) await Promise.allSettled(pending);
      return (await this.appendAfterKnownHeads(unique, tenants, chained)) ?? (await this.appendLocked(unique, tenants, conflicts));
    } finally {
      chained();
    }
  }

  /** The locked transaction (see appendChained); the heads it leaves are remembered, and waited for meanwhile. */
  private appendLocked(logs: AuditEvent[], tenants: string[], conflicts: Conflict[]): Promise<number> {
    const locked = this.em
      .transaction((em) => appendChained(em, logs, logs))
      .then((written) => {
        this.knownHeads.remember(written.heads);
        conflicts.push(...written.conflicts);
        return written.inserted;
      });
    if (this.em.queryRunner === undefined) this.settleBefore(tenants, locked);
    return locked;
  }

  /** Later batches of `tenants` wait for `decided` before they are chained. */
  private settleBefore(tenants: string[], decided: Promise<unknown>): void {
    for (const t of tenants) this.settling.set(t, decided);
    const done = () => {
      for (const t of tenants) if (this.settling.get(t) === decided) this.settling.delete(t);
    };
    decided.then(done, done);
  }

  /**
   * The one-statement path: `logs` chained after the heads this process knows, and written by `log_chain_append`,
   * which locks the heads and writes only if they are still those (see its migration). Undefined when it cannot
   * be taken or was refused (a head never seen here or moved by another writer, an id already stored): then
   * nothing was written, and the locked transaction decides. `chained` is called once the heads it leads to are
   * remembered, before the statement is sent.
   */
  private async appendAfterKnownHeads(logs: AuditEvent[], tenants: string[], chained = () => {}): Promise<number | undefined> {
    const unknown = tenants.filter((t) => !this.knownHeads.has(t));
    if (unknown.length > 0) {
      // Read without a lock: only a guess, which the function checks under the lock.
      const rows: HeadRow[] = await this.em.query(`${SELECT_HEADS} WHERE tenant_id = ANY($1::uuid[])`, [unknown]);
      this.knownHeads.remember(rows.map(fromHeadRow));
      // A tenant's first log: its head is created by the transaction path.
      if (rows.length < unknown.length) return undefined;
    }
    // A head known before that read may have been forgotten during it (a write of this repository was refused or
    // failed meanwhile): then the transaction path decides, as for a head never seen.
    const before: ChainHead[] = [];
    for (const t of tenants) {
      const head = this.knownHeads.get(t);
      if (head === undefined) return undefined;
      before.push(head);
    }
    const { rows, heads } = chainRows(before, logs);
    // Remembered now, not after the commit: a next batch of these tenants is chained after them while this one is
    // in flight (its statement then waits for this one's locks). If this one fails, the next is refused too.
    this.knownHeads.remember(heads);
    chained();
    try {
      // Each outbox row by its id and its tenant (a uuid is 36 characters): sorted by id, then tenant.
      const outbox = logs.map((l) => l.id + l.tenantId).sort();
      await this.em.query(`SELECT log_chain_append($1::uuid[], $2::uuid[], $3::uuid[], $4::bigint[], $5::text[], $6::bigint[], $7::text[], $8::json)`, [
        outbox.map((pair) => pair.slice(0, 36)),
        outbox.map((pair) => pair.slice(36)),
        tenants,
        before.map((h) => h.position),
        before.map((h) => h.hash),
        heads.map((h) => h.position),
        heads.map((h) => h.hash),
        rows,
      ]);
    } catch (error) {
      this.knownHeads.forget(tenants);
      const code = (error as { code?: unknown }).code;
      if (code === HEAD_MOVED || code === ID_STORED) return undefined;
      throw error;
    }
    return logs.length;
  }

  async relayOutbox(recordedBefore: Date, limit: number): Promise<number> {
    return withLogPartitions(
      this.em,
      () => outboxDays(this.em, recordedBefore),
      () => this.relayOnce(recordedBefore, limit),
    );
  }

  private async relayOnce(recordedBefore: Date, limit: number): Promise<number> {
    // SKIP LOCKED: relays of several workers split the backlog instead of queueing behind one another.
    const { moved, heads } = await this.em.transaction(async (em) => {
      const rows: LogRow[] = await em.query(RELAY_CLAIM, [recordedBefore.toISOString(), limit]);
      const events = rows.map(fromLogRow).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || compare(a.id, b.id));
      const written = await appendChained(em, events, []);
      // An id written under another tenant since the claim read: all rolled back (the events stay in the outbox);
      // the next claim leaves that one, and takes the others.
      if (written.conflicts.length > 0) throw new LogIdConflictError(written.conflicts, 'left in audit_outbox');
      return { moved: rows.length, heads: written.heads };
    });
    this.knownHeads.remember(heads);
    if (moved < limit) {
      const left: { id: string; tenant_id: string }[] = await this.em.query(OUTBOX_CONFLICTS, [recordedBefore.toISOString()]);
      if (left.length > 0)
        throw new LogIdConflictError(
          left.map((r) => ({ id: r.id, tenantId: r.tenant_id })),
          'left in audit_outbox',
        );
    }
    return moved;
  }
}

/**
 * Writes `logs` (unique ids, in chain order) that are not stored yet into their tenants' chains, after deleting
 * the outbox rows of `delivered` (by id and tenant); inside the caller's transaction. Returns how many were new,
 * the heads of the logs' tenants as they will be once the transaction commits, and the ids of `logs` stored under
 * another tenant (conflicts: not written, their outbox rows kept).
 */
async function appendChained(
  em: EntityManager,
  logs: AuditEvent[],
  delivered: AuditEvent[],
): Promise<{ inserted: number; heads: ChainHead[]; conflicts: Conflict[] }> {
  if (logs.length === 0) return { inserted: 0, heads: [], conflicts: [] };
  const tenants = [...new Set(logs.map((l) => l.tenantId))].sort(compare);
  const outbox = [...delivered].sort((a, b) => compare(a.id, b.id));
  await em.query(DELIVER_AND_CREATE_HEADS, [outbox.map((l) => l.id), outbox.map((l) => l.tenantId), tenants]);
  const locked = ((await em.query(LOCK_HEADS, [tenants])) as HeadRow[]).map(fromHeadRow);
  // Optimistic: a log already stored is rare (a retried job, the relay racing a job), so the batch is chained and
  // inserted as it is, behind a savepoint; if any id turns out to be stored, the insert is undone and the batch
  // chained again without those ids. Stored under the same tenant, a duplicate (read under the heads' locks: whoever
  // wrote it has committed); under another, a conflict. A writer of another tenant may insert one of the ids
  // meanwhile: the insert waits for its commit, and the next round reads its row. Each round drops at least one id.
  await em.query('SAVEPOINT chain_append');
  const conflicts: Conflict[] = [];
  let fresh = logs;
  for (;;) {
    const written = await insertChained(em, locked, fresh);
    if (written.inserted === fresh.length) return { ...written, conflicts };
    await em.query('ROLLBACK TO SAVEPOINT chain_append');
    const rows: { id: string; tenant_id: string }[] = await em.query(`SELECT id, tenant_id FROM log_ids WHERE id = ANY($1::uuid[])`, [fresh.map((l) => l.id)]);
    if (rows.length === 0) throw new Error('a log of the batch was not inserted, and no log of its id is stored');
    const stored = new Map(rows.map((r) => [r.id, r.tenant_id]));
    conflicts.push(...fresh.filter((l) => stored.has(l.id) && stored.get(l.id) !== l.tenantId).map((l) => ({ id: l.id, tenantId: l.tenantId })));
    fresh = fresh.filter((l) => !stored.has(l.id));
    if (fresh.length === 0) return { inserted: 0, heads: locked, conflicts };
  }
}

/**
 * Numbers and hashes `logs` after `heads` (locked), inserts them (skipping ids already stored) and moves the heads;
 * returns how many were inserted and the heads after them.
 */
async function insertChained(em: EntityManager, heads: ChainHead[], logs: AuditEvent[]): Promise<{ inserted: number; heads: ChainHead[] }> {
  const chained = chainRows(heads, logs);
  const moved = chained.heads.filter((h, i) => h.position !== heads[i]!.position);
  // One statement inserts the chained rows (the whole batch as one JSON parameter: any size fits, and PostgreSQL's
  // JSON parser is far cheaper than the driver's per-element array encoding) and moves the heads. An id is claimed in
  // log_ids (unique across tenants and time partitions) first; a log whose id was taken is not inserted.
  const [row] = await em.query(
    `WITH batch AS MATERIALIZED (SELECT * FROM json_populate_recordset(NULL::logs, $1::json)),
     claimed AS (INSERT INTO log_ids (id, tenant_id) SELECT id, tenant_id FROM batch ON CONFLICT (id) DO NOTHING RETURNING id),
     inserted AS (
       INSERT INTO logs (${LOG_COLUMNS}, seq, hash) SELECT ${LOG_COLUMNS}, seq, hash FROM batch WHERE id IN (SELECT id FROM claimed)
       RETURNING 1),
     moved AS (
       UPDATE log_chains h SET seq = v.s, hash = decode(v.h, 'hex')
       FROM unnest($2::uuid[], $3::bigint[], $4::text[]) AS v(t, s, h)
       WHERE h.tenant_id = v.t
       RETURNING 1)
     SELECT (SELECT count(*) FROM inserted)::int AS n, (SELECT count(*) FROM moved)::int AS heads`,
    [chained.rows, moved.map((h) => h.tenantId), moved.map((h) => h.position), moved.map((h) => h.hash)],
  );
  return { inserted: (row as { n: number }).n, heads: chained.heads };
}

/**
 * `logs` chained after `heads` (one per tenant of the logs, any order; the logs are not changed), as the JSON of the
 * rows the insert takes (each log's LogJson and its chain columns), and the heads after them, in the order of `heads`.
 */
function chainRows(heads: ChainHead[], logs: AuditEvent[]): { rows: string; heads: ChainHead[] } {
  const chained = chainLogs(heads, logs, (log, seq, hash, createdAt): ChainedRow => {
    const row = toLogJson(log, createdAt) as ChainedRow;
    row.seq = seq;
    row.hash = `\\x${hash}`;
    return row;
  });
  return { rows: JSON.stringify(chained.chained), heads: chained.heads };
}

/** A row the insert takes (json_populate_recordset): an absent field is left out, and PostgreSQL makes it NULL. */
type ChainedRow = LogJson & { seq: number; hash: string };

const HEAD_MOVED = 'GHC01';
const ID_STORED = 'GHC02';

/**
 * The heads one repository last wrote or read, per tenant. Only a guess (the database checks it under the heads'
 * locks), so any staleness costs one refused statement, never a wrong chain. Bounded: a process writing for more
 * tenants than this starts over.
 */
class KnownHeads {
  private static readonly MAX_TENANTS = 10_000;
  private readonly heads = new Map<string, ChainHead>();

  has(tenantId: string): boolean {
    return this.heads.has(tenantId);
  }

  get(tenantId: string): ChainHead | undefined {
    return this.heads.get(tenantId);
  }

  remember(heads: ChainHead[]): void {
    if (this.heads.size + heads.length > KnownHeads.MAX_TENANTS) this.heads.clear();
    for (const head of heads) this.heads.set(head.tenantId, head);
  }

  forget(tenantIds: string[]): void {
    for (const tenantId of tenantIds) this.heads.delete(tenantId);
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
