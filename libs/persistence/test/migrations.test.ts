import { openDatabase, Database } from '@gatehouse/persistence';
import { TEST_DATABASE_URL } from '../../../test/support/test-env';

/** CI fails on a pending migration: the entities must describe exactly the schema the migrations build. */
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
    const missing = sql.upQueries.map((q) => q.query).filter((q) => !/\bDROP (INDEX|CONSTRAINT|DEFAULT)\b/.test(q));
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
});
