import { MigrationInterface, QueryRunner } from 'typeorm';

export class KeyRotationLastUse1764000110000 implements MigrationInterface {
  name = 'KeyRotationLastUse1764000110000';

  async up(q: QueryRunner): Promise<void> {
    // The key before the last regenerate, accepted until previous_key_expires_at (rotation with an overlap).
    await q.query(`ALTER TABLE "applications" ADD COLUMN "previous_key_hash" char(64), ADD COLUMN "previous_key_expires_at" timestamptz,
      ADD CONSTRAINT "applications_previous_key_both" CHECK (("previous_key_hash" IS NULL) = ("previous_key_expires_at" IS NULL))`);
    await q.query(`CREATE UNIQUE INDEX "applications_previous_key_hash_key" ON "applications" ("previous_key_hash") WHERE "previous_key_hash" IS NOT NULL`);
    // When a key last authenticated, to the minute; NULL: never. Indexed for the unused_since filter.
    await q.query(`ALTER TABLE "applications" ADD COLUMN "last_used_at" timestamptz`);
    await q.query(`CREATE INDEX "applications_tenant_last_used_idx" ON "applications" ("tenant_id", "last_used_at")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "applications_tenant_last_used_idx"`);
    await q.query(`DROP INDEX "applications_previous_key_hash_key"`);
    await q.query(`ALTER TABLE "applications" DROP CONSTRAINT "applications_previous_key_both",
      DROP COLUMN "last_used_at", DROP COLUMN "previous_key_expires_at", DROP COLUMN "previous_key_hash"`);
  }
}
