import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The `logs` table. Every list query is `tenant_id = ?` plus optional filters, newest first, so each
 * index leads with tenant_id and ends with (created_at DESC, id DESC): a first page, a count and every
 * keyset page read one contiguous index range, whatever the table's size.
 */
export class AuditLogs1763700000300 implements MigrationInterface {
  name = 'AuditLogs1763700000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "logs" (
      "id" uuid PRIMARY KEY,
      "tenant_id" uuid NOT NULL,
      "actor_id" uuid,
      "actor_type" varchar(16),
      "entity_type" varchar(64) NOT NULL,
      "entity_id" varchar(200) NOT NULL,
      "operation" varchar(16) NOT NULL,
      "message" text NOT NULL,
      "created_at" timestamptz NOT NULL)`);
    await q.query(`CREATE INDEX "logs_tenant_created_idx" ON "logs" ("tenant_id", "created_at" DESC, "id" DESC)`);
    await q.query(`CREATE INDEX "logs_tenant_type_created_idx" ON "logs" ("tenant_id", "entity_type", "created_at" DESC, "id" DESC)`);
    await q.query(`CREATE INDEX "logs_tenant_entity_created_idx" ON "logs" ("tenant_id", "entity_type", "entity_id", "created_at" DESC, "id" DESC)`);
    // Append-only in the database itself, not only by convention: no code path can rewrite history.
    await q.query(`CREATE FUNCTION "logs_refuse_change"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'logs are append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await q.query(`CREATE TRIGGER "logs_append_only" BEFORE UPDATE OR DELETE ON "logs"
      FOR EACH ROW EXECUTE FUNCTION "logs_refuse_change"()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "logs"`);
    await q.query(`DROP FUNCTION "logs_refuse_change"()`);
  }
}
