import { Database, openDatabase, runMigrations } from '@gatehouse/persistence';
import { withAdmin } from './admin-database';
import { ADMIN_DATABASE_URL, testDatabaseName } from './test-env';

export interface OwnDatabase {
  url: string;
  database: Database;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/**
 * A migrated database of the test's own on the test tier's PostgreSQL, for tests that change what every test shares
 * (a vault key rotation re-wraps every key of the database it runs on).
 */
export async function ownDatabase(suffix: string): Promise<OwnDatabase> {
  const name = `${testDatabaseName()}_${suffix}`;
  const url = ADMIN_DATABASE_URL.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);
  const drop = () => withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).then(() => undefined));
  await drop();
  await withAdmin((admin) => admin.query(`CREATE DATABASE "${name}"`).then(() => undefined));
  const database = await openDatabase({ url, dataDir: '', poolSize: 8 });
  await runMigrations(database);
  return {
    url,
    database,
    drop: async () => {
      await database.close();
      await drop();
    },
  };
}
