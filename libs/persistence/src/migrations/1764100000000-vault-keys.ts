import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The vault's keys, stored only wrapped by the key-encryption key named in kek_id. A tenant has a chain of generations
 * per purpose; the newest active one seals, every active one opens, and `vault re-encrypt` retires the older ones once
 * nothing refers to them. The lookup key (purpose `lookup`) is global: tenant_id NULL.
 */
export class VaultKeys1764100000000 implements MigrationInterface {
  name = 'VaultKeys1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "vault_keys" (
      "key_id" uuid PRIMARY KEY,
      "tenant_id" uuid,
      "purpose" varchar(16) NOT NULL CHECK ("purpose" IN ('data', 'fingerprint', 'lookup')),
      "generation" integer NOT NULL,
      "wrapped" bytea NOT NULL,
      "kek_id" varchar(100) NOT NULL,
      "state" varchar(8) NOT NULL CHECK ("state" IN ('active', 'retired')),
      "created_at" timestamptz NOT NULL,
      "retired_at" timestamptz,
      CHECK (("purpose" = 'lookup') = ("tenant_id" IS NULL)))`);
    // Two processes making a tenant's first key (or the same next generation) at once: one insert wins, the other re-reads.
    await q.query(`CREATE UNIQUE INDEX "vault_keys_generation_key" ON "vault_keys" ("tenant_id", "purpose", "generation") NULLS NOT DISTINCT`);
    await q.query(`CREATE INDEX "vault_keys_kek_idx" ON "vault_keys" ("kek_id")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "vault_keys"`);
  }
}
