import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Log retention (docs/audit-trail.md, "Retention and its anchor"): a tenant's retention period, the signed retention
 * anchors, and the logs' append-only trigger relaxed for exactly one removal: a tenant's logs up to one of its
 * anchors. Any other UPDATE or DELETE is still refused.
 */
export class LogRetention1764200000000 implements MigrationInterface {
  name = 'LogRetention1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "tenants" ADD COLUMN "log_retention_days" integer NULL
      CONSTRAINT "tenants_log_retention_days_check" CHECK ("log_retention_days" BETWEEN 1 AND 36500)`);
    // An anchor has a checkpoint's fields (tenant, position, hash, signed_at, key_id, signature) and primary key.
    await q.query(`CREATE TABLE "log_retention_anchors" (LIKE "log_checkpoints" INCLUDING ALL)`);
    await q.query(`CREATE TRIGGER "log_retention_anchors_append_only" BEFORE UPDATE OR DELETE ON "log_retention_anchors"
      FOR EACH ROW EXECUTE FUNCTION "logs_refuse_change"()`);
    await q.query(`CREATE FUNCTION "logs_refuse_change_outside_retention"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' AND EXISTS (
          SELECT 1 FROM "log_retention_anchors" a WHERE a."tenant_id" = OLD."tenant_id" AND a."seq" >= OLD."seq") THEN
          RETURN OLD;
        END IF;
        RAISE EXCEPTION 'logs are append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await q.query(`DROP TRIGGER "logs_append_only" ON "logs"`);
    await q.query(`CREATE TRIGGER "logs_append_only" BEFORE UPDATE OR DELETE ON "logs"
      FOR EACH ROW EXECUTE FUNCTION "logs_refuse_change_outside_retention"()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER "logs_append_only" ON "logs"`);
    await q.query(`CREATE TRIGGER "logs_append_only" BEFORE UPDATE OR DELETE ON "logs"
      FOR EACH ROW EXECUTE FUNCTION "logs_refuse_change"()`);
    await q.query(`DROP FUNCTION "logs_refuse_change_outside_retention"()`);
    await q.query(`DROP TABLE "log_retention_anchors"`);
    await q.query(`ALTER TABLE "tenants" DROP COLUMN "log_retention_days"`);
  }
}
