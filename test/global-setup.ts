import { openDatabase, runMigrations } from '@gatehouse/persistence';
import { withAdmin } from './support/admin-database';
import { ADMIN_DATABASE_URL } from './support/test-env';

/**
 * A fresh database for this jest run, migrated once; tests then create their own tenants, so they share no seed.
 * The name is exported through the environment, which the test files read (test/support/test-env.ts).
 */
export default async function globalSetup(): Promise<void> {
  const name = process.env.TEST_DATABASE_NAME ?? `gatehouse_test_${process.pid}`;
  process.env.TEST_DATABASE_NAME = name;
  const url = ADMIN_DATABASE_URL.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);
  process.env.TEST_DATABASE_URL = url;
  await withAdmin(async (admin) => {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
  });
  const database = await openDatabase({ url, dataDir: '' });
  try {
    await runMigrations(database);
  } finally {
    await database.close();
  }
}
