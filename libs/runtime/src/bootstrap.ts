import { Logger as PinoLogger } from 'pino';
import { AppConfig, ConfigError, loadConfig } from '@gatehouse/config';
import { Database, openDatabase, runMigrations } from '@gatehouse/persistence';

/** Reads the environment; a bad value ends the process with one line naming the variable. */
export function loadConfigOrExit(): AppConfig {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`gatehouse: configuration error: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

export async function openMigratedDatabase(config: AppConfig, logger?: PinoLogger, applicationName?: string): Promise<Database> {
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    applicationName,
  });
  const applied = await runMigrations(database);
  logger?.info({ embedded: database.embedded, migrations_applied: applied }, 'database ready');
  return database;
}
