import { MigrationInterface, QueryRunner } from 'typeorm';
import { logChainAppendFunction } from './1764000513000-log-chain-append';
import { DROP_LOG_PARTITION_FUNCTIONS, INSERT_CLAIMED_LOGS, LOG_PARTITION_FUNCTIONS } from './log-partitions.functions';

const OUTBOX = 'outbox_ids uuid[], outbox_tenants uuid[]';
const DELETE_OWN_OUTBOX = `DELETE FROM audit_outbox o USING unnest(outbox_ids, outbox_tenants) AS v(id, t)
          WHERE o.id = ANY(outbox_ids) AND o.id = v.id AND o.tenant_id = v.t;`;

/** The indexes every partition has (through the partitioned table's), as the unpartitioned table had them. */
const INDEXES: [string, string][] = [
  ['logs_tenant_created_idx', '("tenant_id", "created_at" DESC, "id" DESC)'],
  ['logs_tenant_type_created_idx', '("tenant_id", "entity_type", "created_at" DESC, "id" DESC)'],
  ['logs_tenant_entity_created_idx', '("tenant_id", "entity_type", "entity_id", "created_at" DESC, "id" DESC)'],
  ['logs_tenant_request_idx', '("tenant_id", "request_id", "created_at" DESC, "id" DESC) WHERE "request_id" IS NOT NULL'],
];

/** How long the swap waits for the table's lock before it gives up and tries again (behind a long export, say). */
const SWAP_LOCK_TIMEOUT = '5s';
const SWAP_ATTEMPTS = 20;

/**
 * `logs` becomes a table partitioned by range of `created_at` (docs/audit-trail.md, "Time partitions"), online: the
 * service keeps writing and reading while it runs, and waits only for one short transaction (measured on the bench:
 * the figure is in that page). Not in a transaction of its own, step by step, each step safe to run again:
 *
 * 1. `log_ids (id, tenant_id)`: the log id's uniqueness across partitions and tenants (a partitioned table cannot
 *    have a unique index without its partition key). Filled from the existing logs while a statement trigger records
 *    the ids of the logs inserted meanwhile.
 * 2. A CHECK `created_at < bound` (the month after the newest log, and after this one), added NOT VALID, then
 *    validated: a scan under SHARE UPDATE EXCLUSIVE, which writes do not wait for.
 * 3. One transaction under the table's lock: the table is renamed `logs_legacy`, a partitioned `logs` created with
 *    the same columns and indexes, the old table attached as its partition FROM (MINVALUE) TO (bound) (the validated
 *    CHECK spares the scan, its indexes are attached, none is built), the partitions of the next two months created,
 *    `log_chain_append` replaced. Catalog changes only: milliseconds, whatever the size.
 */
export class LogPartitions1764400000000 implements MigrationInterface {
  name = 'LogPartitions1764400000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    if (await isPartitioned(q)) return;
    await q.query(`CREATE TABLE IF NOT EXISTS "log_ids" ("id" uuid PRIMARY KEY, "tenant_id" uuid NOT NULL)`);
    await q.query(`CREATE OR REPLACE FUNCTION "log_ids_record"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO log_ids (id, tenant_id) SELECT id, tenant_id FROM added ON CONFLICT (id) DO NOTHING;
        RETURN NULL;
      END $$`);
    await q.query(`DROP TRIGGER IF EXISTS "logs_record_ids" ON "logs"`);
    await q.query(`CREATE TRIGGER "logs_record_ids" AFTER INSERT ON "logs" REFERENCING NEW TABLE AS added
      FOR EACH STATEMENT EXECUTE FUNCTION "log_ids_record"()`);
    await q.query(`INSERT INTO "log_ids" ("id", "tenant_id") SELECT "id", "tenant_id" FROM "logs" ON CONFLICT ("id") DO NOTHING`);

    const [{ bound }] = (await q.query(`SELECT to_char(date_trunc('month', greatest(now(), max("created_at")) AT TIME ZONE 'UTC')
      + interval '1 month', 'YYYY-MM-DD"T00:00:00Z"') AS bound FROM "logs"`)) as [{ bound: string }];
    await q.query(`ALTER TABLE "logs" DROP CONSTRAINT IF EXISTS "logs_legacy_range"`);
    await q.query(`ALTER TABLE "logs" ADD CONSTRAINT "logs_legacy_range" CHECK ("created_at" < '${bound}') NOT VALID`);
    await q.query(`ALTER TABLE "logs" VALIDATE CONSTRAINT "logs_legacy_range"`);
    for (const sql of LOG_PARTITION_FUNCTIONS) await q.query(sql);

    await underLock(q, async () => {
      await q.query(`DROP TRIGGER "logs_record_ids" ON "logs"`);
      await q.query(`DROP FUNCTION "log_ids_record"()`);
      // The partitioned table's trigger is cloned onto the partition when it is attached.
      await q.query(`DROP TRIGGER "logs_append_only" ON "logs"`);
      await q.query(`ALTER TABLE "logs" RENAME TO "logs_legacy"`);
      await q.query(`ALTER TABLE "logs_legacy" RENAME CONSTRAINT "logs_pkey" TO "logs_legacy_pkey"`);
      await q.query(`ALTER INDEX "logs_tenant_seq_idx" RENAME TO "logs_legacy_tenant_seq_idx"`);
      for (const [name] of INDEXES) await q.query(`ALTER INDEX "${name}" RENAME TO "${name.replace(/^logs_/, 'logs_legacy_')}"`);
      await q.query(`CREATE TABLE "logs" (LIKE "logs_legacy" INCLUDING DEFAULTS) PARTITION BY RANGE ("created_at")`);
      for (const [name, columns] of INDEXES) await q.query(`CREATE INDEX "${name}" ON "logs" ${columns}`);
      await q.query(`CREATE TRIGGER "logs_append_only" BEFORE UPDATE OR DELETE ON "logs" FOR EACH ROW EXECUTE FUNCTION "logs_refuse_change"()`);
      await q.query(`ALTER TABLE "logs" ATTACH PARTITION "logs_legacy" FOR VALUES FROM (MINVALUE) TO ('${bound}')`);
      await q.query(`ALTER TABLE "logs_legacy" DROP CONSTRAINT "logs_legacy_range"`);
      await q.query(`SELECT log_partitions_ensure($1, $1::timestamptz + interval '2 months')`, [bound]);
      await q.query(logChainAppendFunction(OUTBOX, DELETE_OWN_OUTBOX, INSERT_CLAIMED_LOGS));
    });
  }

  /** Back to one table: a copy of every log under the table's lock (offline for as long as the copy takes). */
  async down(q: QueryRunner): Promise<void> {
    if (!(await isPartitioned(q))) return;
    await underLock(q, async () => {
      await q.query(`CREATE TABLE "logs_unpartitioned" (LIKE "logs" INCLUDING DEFAULTS)`);
      await q.query(`INSERT INTO "logs_unpartitioned" SELECT * FROM "logs"`);
      await q.query(`DROP TABLE "logs"`);
      await q.query(`ALTER TABLE "logs_unpartitioned" RENAME TO "logs"`);
      await q.query(`ALTER TABLE "logs" ADD CONSTRAINT "logs_pkey" PRIMARY KEY ("id")`);
      for (const [name, columns] of INDEXES) await q.query(`CREATE INDEX "${name}" ON "logs" ${columns}`);
      await q.query(`CREATE UNIQUE INDEX "logs_tenant_seq_idx" ON "logs" ("tenant_id", "seq")`);
      await q.query(`CREATE TRIGGER "logs_append_only" BEFORE UPDATE OR DELETE ON "logs" FOR EACH ROW EXECUTE FUNCTION "logs_refuse_change"()`);
      await q.query(logChainAppendFunction(OUTBOX, DELETE_OWN_OUTBOX));
      for (const sql of DROP_LOG_PARTITION_FUNCTIONS) await q.query(sql);
      await q.query(`DROP TABLE "log_ids"`);
    });
  }
}

async function isPartitioned(q: QueryRunner): Promise<boolean> {
  const rows: unknown[] = await q.query(`SELECT 1 FROM pg_partitioned_table WHERE partrelid = to_regclass('logs')`);
  return rows.length > 0;
}

/**
 * `work` in one transaction that first takes the logs table's ACCESS EXCLUSIVE lock. A wait beyond
 * SWAP_LOCK_TIMEOUT (a long reader ahead) gives up, so the writers queued behind it are not held, and tries again.
 */
async function underLock(q: QueryRunner, work: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await q.startTransaction();
    try {
      await q.query(`SET LOCAL lock_timeout = '${SWAP_LOCK_TIMEOUT}'`);
      await q.query(`LOCK TABLE "logs" IN ACCESS EXCLUSIVE MODE`);
      await q.query(`SET LOCAL lock_timeout = 0`);
      await work();
      await q.commitTransaction();
      return;
    } catch (error) {
      await q.rollbackTransaction();
      if ((error as { code?: string }).code !== '55P03' || attempt === SWAP_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}
