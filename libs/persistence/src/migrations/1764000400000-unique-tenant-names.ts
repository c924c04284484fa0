import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tenant names become unique (operators find tenants by name in the CLI). A database that already holds the same
 * name twice (two replicas creating `default` at one start, or two `tenant create` runs) keeps the oldest under its
 * name; each later one is renamed `<name> (<id>)`, cut so that it stays within 200 characters.
 */
export class UniqueTenantNames1764000400000 implements MigrationInterface {
  name = 'UniqueTenantNames1764000400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE "tenants" t SET "name" = left(t."name", 200 - 39) || ' (' || t."id" || ')'
      FROM (SELECT "id", row_number() OVER (PARTITION BY "name" ORDER BY "created_at", "id") AS n FROM "tenants") d
      WHERE d."id" = t."id" AND d.n > 1`);
    await q.query(`CREATE UNIQUE INDEX "tenants_name_key" ON "tenants" ("name")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "tenants_name_key"`);
  }
}
