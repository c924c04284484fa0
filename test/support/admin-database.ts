import { Client } from 'pg';
import { ADMIN_DATABASE_URL } from './test-env';

/** A connection to the server's administrative database (creating and dropping test databases). */
export async function withAdmin(work: (admin: Client) => Promise<void>): Promise<void> {
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    await work(admin);
  } finally {
    await admin.end();
  }
}
