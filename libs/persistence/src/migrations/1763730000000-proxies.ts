import { MigrationInterface, QueryRunner } from 'typeorm';

export class Proxies1763730000000 implements MigrationInterface {
  name = 'Proxies1763730000000';

  async up(q: QueryRunner): Promise<void> {
    // application_id has no foreign key: deleting an application must not fail or silently rewrite its proxies;
    // a proxy naming a deleted application keeps working, and its svc calls answer 401.
    await q.query(`CREATE TABLE "proxies" (
      "id" uuid PRIMARY KEY,
      "tenant_id" uuid NOT NULL REFERENCES "tenants"("id"),
      "name" varchar(200) NOT NULL,
      "key" varchar(64) NOT NULL,
      "destination_url" varchar(400) NOT NULL,
      "request_transform_code" text,
      "response_transform_code" text,
      "configuration" jsonb,
      "application_id" uuid,
      "require_auth" boolean NOT NULL DEFAULT true,
      "created_by" uuid,
      "created_at" timestamptz NOT NULL,
      "modified_by" uuid,
      "modified_at" timestamptz)`);
    await q.query(`CREATE UNIQUE INDEX "proxies_key_key" ON "proxies" ("key")`);
    await q.query(`CREATE INDEX "proxies_tenant_created_idx" ON "proxies" ("tenant_id", "created_at", "id")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "proxies"`);
  }
}
