import { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1763700000000 implements MigrationInterface {
  name = 'InitialSchema1763700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "tenants" (
      "id" uuid PRIMARY KEY,
      "name" varchar(200) NOT NULL,
      "created_at" timestamptz NOT NULL)`);
    await q.query(`CREATE TABLE "applications" (
      "id" uuid PRIMARY KEY,
      "tenant_id" uuid NOT NULL REFERENCES "tenants"("id"),
      "name" varchar(200) NOT NULL,
      "type" varchar(16) NOT NULL,
      "permissions" text[] NOT NULL,
      "rules" jsonb NOT NULL,
      "key_hash" char(64) NOT NULL,
      "created_by" uuid,
      "created_at" timestamptz NOT NULL,
      "modified_by" uuid,
      "modified_at" timestamptz,
      "expires_at" timestamptz,
      "can_create_expiring_applications" boolean)`);
    await q.query(`CREATE UNIQUE INDEX "applications_key_hash_key" ON "applications" ("key_hash")`);
    await q.query(`CREATE INDEX "applications_tenant_created_idx" ON "applications" ("tenant_id", "created_at", "id")`);
    await q.query(`CREATE INDEX "applications_expires_at_idx" ON "applications" ("expires_at") WHERE "expires_at" IS NOT NULL`);
    await q.query(`CREATE TABLE "audit_outbox" (
      "id" uuid PRIMARY KEY,
      "tenant_id" uuid NOT NULL,
      "actor_id" uuid,
      "actor_type" varchar(16) NOT NULL,
      "entity_type" varchar(64) NOT NULL,
      "entity_id" varchar(200) NOT NULL,
      "operation" varchar(16) NOT NULL,
      "message" text NOT NULL,
      "created_at" timestamptz NOT NULL)`);
    await q.query(`CREATE INDEX "audit_outbox_created_idx" ON "audit_outbox" ("created_at")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "audit_outbox"`);
    await q.query(`DROP TABLE "applications"`);
    await q.query(`DROP TABLE "tenants"`);
  }
}
