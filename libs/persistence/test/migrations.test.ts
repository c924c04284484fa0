import { randomUUID } from 'node:crypto';
import { openDatabase, Database, MIGRATIONS } from '@gatehouse/persistence';
import { TEST_DATABASE_URL } from '@gatehouse/test-support/test-env';

/** CI fails on a pending migration: the entities must describe exactly the schema the migrations build. */
const UniqueTenantNames1764000400000 = MIGRATIONS.find((m) => m.name === 'UniqueTenantNames1764000400000')!;

describe('migrations', () => {
  let database: Database;
  beforeAll(async () => (database = await openDatabase({ url: TEST_DATABASE_URL, dataDir: '' })));
  afterAll(() => database.close());

  it('leaves nothing pending', async () => {
    expect(await database.dataSource.showMigrations()).toBe(false);
  });

  it('build every table, column and index the entities declare (no migration missing)', async () => {
    const sql = await database.dataSource.driver.createSchemaBuilder().log();
    // Migrations may add what entities cannot express (foreign keys, partial and descending indexes, defaults):
    // TypeORM proposes to drop those, which is not a missing migration.
    // `logs` is partitioned by created_at, so it cannot have a primary key on `id` alone: the id's uniqueness is the
    // primary key of `log_ids` (docs/audit-trail.md, "Time partitions"), which TypeORM does not see.
    const missing = sql.upQueries
      .map((q) => q.query)
      .filter((q) => !/\bDROP (INDEX|CONSTRAINT|DEFAULT)\b/.test(q) && !/^ALTER TABLE "logs" ADD CONSTRAINT "PK_\w+" PRIMARY KEY \("id"\)$/.test(q));
    expect(missing).toEqual([]);
  });

  it('notices an index an entity declares that no migration creates', async () => {
    await database.dataSource.query('DROP INDEX "applications_key_hash_key"');
    try {
      const sql = await database.dataSource.driver.createSchemaBuilder().log();
      expect(sql.upQueries.map((q) => q.query).join('\n')).toMatch(/CREATE UNIQUE INDEX "applications_key_hash_key"/);
    } finally {
      await database.dataSource.query('CREATE UNIQUE INDEX "applications_key_hash_key" ON "applications" ("key_hash")');
    }
  });

  it('makes tenant names unique, renaming the later tenants of a name a database already holds twice', async () => {
    const { dataSource } = database;
    const name = `dup-${randomUUID().slice(0, 8)}`;
    const long = 'L'.repeat(200);
    const ids = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    try {
      // The schema as it was before the migration, holding what the missing constraint let in.
      await new UniqueTenantNames1764000400000().down(runner);
      const insert = (id: string, tenantName: string, at: string) =>
        runner.query('INSERT INTO tenants (id, name, created_at) VALUES ($1, $2, $3)', [id, tenantName, at]);
      await insert(ids[0]!, name, '2026-01-02T00:00:00Z');
      await insert(ids[1]!, name, '2026-01-01T00:00:00Z');
      await insert(ids[2]!, name, '2026-01-03T00:00:00Z');
      await insert(ids[3]!, long, '2026-01-01T00:00:00Z');
      await insert(ids[4]!, long, '2026-01-02T00:00:00Z');
      await new UniqueTenantNames1764000400000().up(runner);

      const rows: { id: string; name: string }[] = await runner.query('SELECT id, name FROM tenants WHERE id = ANY($1)', [ids]);
      const nameOf = (id: string) => rows.find((r) => r.id === id)!.name;
      expect(nameOf(ids[1]!)).toBe(name);
      expect(nameOf(ids[0]!)).toBe(`${name} (${ids[0]})`);
      expect(nameOf(ids[2]!)).toBe(`${name} (${ids[2]})`);
      expect(nameOf(ids[3]!)).toBe(long);
      expect(nameOf(ids[4]!)).toHaveLength(200);
      expect(nameOf(ids[4]!)).toMatch(new RegExp(`^L+ \\(${ids[4]}\\)$`));
      await expect(insert(randomUUID(), name, '2026-01-04T00:00:00Z')).rejects.toThrow(/tenants_name_key/);
    } finally {
      await runner.release();
    }
  });
});
