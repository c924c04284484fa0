import { withAdmin } from './support/admin-database';

export default async function globalTeardown(): Promise<void> {
  const name = process.env.TEST_DATABASE_NAME;
  if (!name || process.env.KEEP_TEST_DATABASE) return;
  await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).then(() => undefined));
}
