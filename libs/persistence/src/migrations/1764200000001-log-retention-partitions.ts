import { MigrationInterface, QueryRunner } from 'typeorm';

const REFUSE = `RAISE EXCEPTION 'logs are append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';`;

/**
 * Retention's one allowed removal, kept across the logs' time partitions: the partitioned table's trigger (and its
 * clone on every partition) runs `logs_refuse_change`, so that function itself now lets a DELETE of a tenant's log
 * through when one of the tenant's retention anchors covers its position (on the logs or a partition of them only:
 * the checkpoints and the anchors stay append-only). Everything else is still refused.
 */
export class LogRetentionPartitions1764200000001 implements MigrationInterface {
  name = 'LogRetentionPartitions1764200000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE OR REPLACE FUNCTION "logs_refuse_change"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' AND TG_TABLE_NAME LIKE 'logs%' THEN
          IF EXISTS (SELECT 1 FROM "log_retention_anchors" a WHERE a."tenant_id" = OLD."tenant_id" AND a."seq" >= OLD."seq") THEN
            RETURN OLD;
          END IF;
        END IF;
        ${REFUSE}
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE OR REPLACE FUNCTION "logs_refuse_change"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${REFUSE}
      END $$`);
  }
}
