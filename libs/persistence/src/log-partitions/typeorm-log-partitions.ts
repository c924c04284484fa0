import { EntityManager } from 'typeorm';
import { LogPartition, LogPartitionInterval, LogPartitions } from '@gatehouse/domain';
import { LOG_PARTITION_LOCK } from '../migrations/log-partitions.functions';

const DROP_LOCK_TIMEOUT = '5s';
/** Ids removed from log_ids per statement when a partition is dropped. */
const RELEASE_BATCH = 50_000;

/** A partition's name as an SQL identifier. */
export function quoted(partition: string): string {
  return `"${partition.replace(/"/g, '""')}"`;
}

/** The partition's ids out of log_ids, in keyset batches over its (tenant_id, seq) index. */
async function releaseIds(em: EntityManager, partition: string): Promise<void> {
  const table = quoted(partition);
  let after: { tenant_id: string | null; seq: string | null } = { tenant_id: null, seq: null };
  for (;;) {
    const [last] = (await em.query(
      `WITH b AS (SELECT id, tenant_id, seq FROM ${table} WHERE $1::uuid IS NULL OR (tenant_id, seq) > ($1::uuid, $2::bigint)
                  ORDER BY tenant_id, seq LIMIT ${RELEASE_BATCH}),
            d AS (DELETE FROM log_ids i USING b WHERE i.id = b.id)
       SELECT tenant_id, seq::text AS seq FROM b ORDER BY tenant_id DESC, seq DESC LIMIT 1`,
      [after.tenant_id, after.seq],
    )) as { tenant_id: string; seq: string }[];
    if (!last) return;
    after = last;
  }
}

/** The SQL functions of migration 1764400000000 (libs/persistence/src/migrations/log-partitions.functions.ts). */
export class TypeormLogPartitions extends LogPartitions {
  constructor(private readonly em: EntityManager) {
    super();
  }

  async ensure(from: Date, to: Date, interval: LogPartitionInterval): Promise<string[]> {
    const rows: { name: string }[] = await this.em.query('SELECT log_partitions_ensure($1, $2, $3) AS name', [from, to, interval]);
    return rows.map((r) => r.name);
  }

  async list(): Promise<LogPartition[]> {
    const rows: { name: string; from_at: Date | null; to_at: Date }[] = await this.em.query('SELECT name, from_at, to_at FROM log_partitions()');
    return rows.map((r) => ({ name: r.name, from: r.from_at, to: r.to_at }));
  }

  /**
   * Dropping a partition takes the logs table's ACCESS EXCLUSIVE lock for a moment, at the end: waiting for it behind a
   * long reader (an export) would hold every writer queued behind the drop, so it gives up after DROP_LOCK_TIMEOUT
   * (PostgreSQL's lock_not_available, 55P03) and the caller tries again later; nothing is dropped then.
   */
  async dropBefore(before: Date): Promise<string[]> {
    return this.em.transaction(async (em) => {
      await em.query(`SET LOCAL lock_timeout = '${DROP_LOCK_TIMEOUT}'`);
      // What log_partitions_drop_before does, in statements each bounded whatever the partition's size (the function is
      // one statement, which the statement timeout cuts off on a partition of millions): under the partitions' lock,
      // each partition closed to writes (SHARE), its ids out of log_ids in batches, then dropped.
      await em.query(`SELECT pg_advisory_xact_lock(${LOG_PARTITION_LOCK})`);
      const doomed: { name: string }[] = await em.query('SELECT name FROM log_partitions() WHERE to_at <= $1 ORDER BY to_at', [before]);
      for (const { name } of doomed) {
        await em.query(`LOCK TABLE ${quoted(name)} IN SHARE MODE`);
        await releaseIds(em, name);
        await em.query(`DROP TABLE ${quoted(name)}`);
      }
      return doomed.map((r) => r.name);
    });
  }
}

/**
 * `write`, and when PostgreSQL refused a row for lack of a partition of its `created_at` (nothing of that statement or
 * transaction was written: the outbox rows and jobs are still there), the missing partitions created in the unit the
 * worker recorded, then `write` once more. `createdAt` gives the instants the write holds, when it fails.
 */
export async function withLogPartitions<T>(em: EntityManager, createdAt: () => Promise<Date[]>, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (!isMissingPartition(error)) throw error;
    await ensurePartitionsOf(em, await createdAt());
    return write();
  }
}

/** The partitions of these instants (one partition each at most: never the span between two far-apart instants). */
export async function ensurePartitionsOf(em: EntityManager, instants: Date[]): Promise<string[]> {
  const distinct = [...new Set(instants.map((d) => d.getTime()))].map((t) => new Date(t).toISOString());
  if (distinct.length === 0) return [];
  const rows: { name: string }[] = await em.query(`SELECT log_partitions_ensure(t, t + interval '1 microsecond') AS name FROM unnest($1::timestamptz[]) AS t`, [
    distinct,
  ]);
  return rows.map((r) => r.name);
}

/** The UTC days of the outbox events recorded before `before`: what the relay may write. */
export async function outboxDays(em: EntityManager, before: Date): Promise<Date[]> {
  const rows: { at: Date }[] = await em.query(`SELECT DISTINCT date_trunc('day', created_at, 'UTC') AS at FROM audit_outbox WHERE created_at < $1`, [
    before.toISOString(),
  ]);
  return rows.map((r) => r.at);
}

/** PostgreSQL's `no partition of relation "logs" found for row` (check_violation, raised by the tuple routing). */
export function isMissingPartition(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown };
  return e?.code === '23514' && typeof e.message === 'string' && e.message.startsWith('no partition of relation');
}
