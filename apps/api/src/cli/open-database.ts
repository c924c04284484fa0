import { loadConfig } from '@gatehouse/config';
import { Database, DatabaseVaultCrypto, LocalKeyWrapper, migrationStatus, openDatabase, runMigrations, VaultRotation } from '@gatehouse/persistence';
import { createApiApp } from '../app';
import { CommandContext } from './command';

// Loaded by the CLI only when a command needs the database, so `--help` and wrong arguments answer at once.
export { DatabaseVaultCrypto, LocalKeyWrapper, migrationStatus, runMigrations, VaultRotation };

/** Opens the database (DATABASE_URL or DATA_DIR) as it is: nothing migrated (`migrate status`). */
export async function openBareDatabase(): Promise<{ database: Database; close: () => Promise<void> }> {
  const database = await openCliDatabase();
  return { database, close: () => database.close() };
}

function openCliDatabase(): Promise<Database> {
  const config = loadConfig();
  return openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: 2, applicationName: 'gatehouse-cli' });
}

/** Opens the database (DATABASE_URL or DATA_DIR), applies pending migrations, and builds the service's providers. */
export async function openCommandContext(): Promise<{ context: CommandContext; close: () => Promise<void> }> {
  const config = loadConfig();
  const database = await openCliDatabase();
  try {
    const migrationsApplied = await runMigrations(database);
    const app = await createApiApp({ config, database, runJobs: false, logger: false });
    return {
      context: { app, database, config, migrationsApplied },
      close: async () => {
        await app.close();
        await database.close();
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}
