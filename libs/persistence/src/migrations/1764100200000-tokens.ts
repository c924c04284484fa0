import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The token vault (CONTRACT.md section 12). Token data lives only in `sealed` (VaultCrypto's AES-256-GCM envelope of
 * the data and its rendered mask); `mask` holds the mask expression, `fingerprint` a keyed hash; containers and
 * metadata are non-sensitive plaintext. `container_prefixes` holds every segment prefix of every container
 * (`/pci/high/` gives `/`, `/pci/`, `/pci/high/`), so that a container-prefix filter or an access rule's container is
 * one GIN-indexed array test. Token ids are the tenant's (up to 400 characters), so log entity ids grow to 400.
 */
export class Tokens1764100200000 implements MigrationInterface {
  name = 'Tokens1764100200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "tokens" (
      "tenant_id" uuid NOT NULL REFERENCES "tenants"("id"),
      "id" varchar(400) NOT NULL,
      "type" varchar(32) NOT NULL,
      "sealed" bytea NOT NULL,
      "mask" jsonb,
      "containers" text array NOT NULL,
      "container_prefixes" text array NOT NULL,
      "metadata" jsonb NOT NULL,
      "fingerprint" varchar(128),
      "fingerprint_expression" text,
      "expires_at" timestamptz,
      "created_by" uuid,
      "created_at" timestamptz NOT NULL,
      "modified_by" uuid,
      "modified_at" timestamptz,
      PRIMARY KEY ("tenant_id", "id"))`);
    await q.query(`CREATE INDEX "tokens_tenant_created_idx" ON "tokens" ("tenant_id", "created_at", "id")`);
    await q.query(`CREATE INDEX "tokens_fingerprint_idx" ON "tokens" ("tenant_id", "fingerprint")`);
    await q.query(`CREATE INDEX "tokens_expires_at_idx" ON "tokens" ("expires_at")`);
    await q.query(`CREATE INDEX "tokens_container_prefixes_idx" ON "tokens" USING gin ("container_prefixes")`);
    await q.query(`CREATE INDEX "tokens_metadata_idx" ON "tokens" USING gin ("metadata" jsonb_path_ops)`);
    await q.query(`ALTER TABLE "audit_outbox" ALTER COLUMN "entity_id" TYPE varchar(400)`);
    await q.query(`ALTER TABLE "logs" ALTER COLUMN "entity_id" TYPE varchar(400)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "tokens"`);
    // Refused (and so rolled back) while a log names an entity id over 200 characters: a log is never rewritten.
    await q.query(`ALTER TABLE "audit_outbox" ALTER COLUMN "entity_id" TYPE varchar(200)`);
    await q.query(`ALTER TABLE "logs" ALTER COLUMN "entity_id" TYPE varchar(200)`);
  }
}
