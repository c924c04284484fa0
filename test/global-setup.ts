import { Client } from 'pg';
import { openDatabase, runMigrations } from '../libs/persistence/src';
import { ADMIN_DATABASE_URL, TEST_DATABASE_NAME, TEST_DATABASE_URL } from './support/test-env';

/** A fresh test database, migrated once; tests then create their own tenants, so they share no seed. */
export default async function globalSetup(): Promise<void> {
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${TEST_DATABASE_NAME}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${TEST_DATABASE_NAME}"`);
  } finally {
    await admin.end();
  }
  const database = await openDatabase({ url: TEST_DATABASE_URL, dataDir: '' });
  try {
    await runMigrations(database);
  } finally {
    await database.close();
  }
}
