import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Log streams: a tenant's audit trail delivered to its SIEM. The configuration (settings as JSON, credentials sealed by
 * the vault) and the delivery state (the acknowledged position, the lease that keeps one worker per stream, the
 * backoff) live in one row, so a restarted worker resumes from the last acknowledged position.
 */
export class LogStreams1764300000000 implements MigrationInterface {
  name = 'LogStreams1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "log_streams" (
      "id" uuid PRIMARY KEY,
      "tenant_id" uuid NOT NULL REFERENCES "tenants" ("id") ON DELETE CASCADE,
      "name" varchar(200) NOT NULL,
      "kind" varchar(32) NOT NULL CHECK ("kind" IN ('https', 'syslog', 'splunk_hec', 'datadog')),
      "settings" jsonb NOT NULL,
      "secrets_sealed" bytea,
      "paused" boolean NOT NULL DEFAULT false,
      "position" bigint NOT NULL DEFAULT 0,
      "sent_position" bigint NOT NULL DEFAULT 0,
      "delivered" bigint NOT NULL DEFAULT 0,
      "redelivered" bigint NOT NULL DEFAULT 0,
      "last_synced_at" timestamptz,
      "last_error" text,
      "last_error_at" timestamptz,
      "failures" integer NOT NULL DEFAULT 0,
      "next_attempt_at" timestamptz NOT NULL DEFAULT now(),
      "lease_owner" uuid,
      "lease_expires_at" timestamptz,
      "created_by" uuid,
      "created_at" timestamptz NOT NULL,
      "modified_by" uuid,
      "modified_at" timestamptz NOT NULL)`);
    await q.query(`CREATE INDEX "log_streams_tenant_created_idx" ON "log_streams" ("tenant_id", "created_at" DESC, "id" DESC)`);
    // What the workers' claim scans: the streams that may be due.
    await q.query(`CREATE INDEX "log_streams_due_idx" ON "log_streams" ("next_attempt_at") WHERE NOT "paused"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "log_streams"`);
  }
}
