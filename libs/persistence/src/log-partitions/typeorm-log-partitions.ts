import { EntityManager } from 'typeorm';
import { LogPartition, LogPartitionInterval, LogPartitions } from '@gatehouse/domain';

const DROP_LOCK_TIMEOUT = '5s';

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
      const rows: { name: string }[] = await em.query('SELECT log_partitions_drop_before($1) AS name', [before]);
      return rows.map((r) => r.name);
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
