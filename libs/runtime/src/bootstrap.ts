import { Logger as PinoLogger } from 'pino';
import { AppConfig, ConfigError, loadConfig } from '@gatehouse/config';
import type { INestApplicationContext } from '@nestjs/common';
import { KeyWrapper } from '@gatehouse/domain';
import { stopTracing } from './tracing';
import { Database, DatabaseVaultCrypto, LocalKeyWrapper, migrationStatus, openDatabase, pendingMigrationsLine, runMigrations } from '@gatehouse/persistence';

/** Reads the environment; bad values end the process with one line for each, naming its variable. */
export function loadConfigOrExit(): AppConfig {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(error.problems.map((problem) => `gatehouse: configuration error: ${problem}\n`).join(''));
      process.exit(1);
    }
    throw error;
  }
}

/**
 * Opens the database and applies pending migrations, or with MIGRATE_ON_START=false refuses (one line, naming what to
 * run) when any is pending.
 */
export async function openMigratedDatabase(config: AppConfig, logger?: PinoLogger, applicationName?: string): Promise<Database> {
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    applicationName,
  });
  for (const warning of database.warnings ?? []) logger?.warn(warning);
  if (!config.migrateOnStart) {
    // The migration Job applies them (Kubernetes): this process's role may lack DDL rights, so it only checks.
    const { pending } = await migrationStatus(database.dataSource).catch(async (error: unknown) => {
      await database.close();
      throw error;
    });
    if (pending.length > 0) {
      await database.close();
      throw new Error(pendingMigrationsLine(pending));
    }
    logger?.info({ embedded: database.embedded, migrations_applied: [], migrate_on_start: false }, 'database ready');
    return database;
  }
  const applied = await runMigrations(database);
  logger?.info({ embedded: database.embedded, migrations_applied: applied }, 'database ready');
  return database;
}

/**
 * Refuses to start with keys that cannot open the vault (a wrong or missing VAULT_KEY): the global lookup key is read
 * (made on first start) and unwrapped, so a mismatch is one line at start rather than failures on every request.
 */
export async function verifyVaultKeys(app: INestApplicationContext, config: AppConfig, logger: PinoLogger): Promise<void> {
  await app.get(DatabaseVaultCrypto).verifyKeys();
  const wrapper = app.get(KeyWrapper);
  const source = wrapper instanceof LocalKeyWrapper ? wrapper.source : undefined;
  logger.info({ kek_id: await wrapper.currentKekId(), kek_source: source?.from }, 'vault keys ready');
  if (source?.generated) {
    logger.warn(
      { file: source.generated },
      config.databaseUrl
        ? 'VAULT_KEY is not set: a key-encryption key was generated into DATA_DIR. Back it up (nothing sealed can be read without it) and give every replica the same key (VAULT_KEY or VAULT_KEY_FILE)'
        : 'a key-encryption key was generated into DATA_DIR: back it up with the database (nothing sealed can be read without it)',
    );
  }
}

/**
 * Stops the process on the first SIGTERM or SIGINT: `drain(signal)` first (what the service finishes before it goes),
 * then the application context, the database and tracing; exits 0, or 1 (logged) when any of it fails.
 */
export function stopOnSignals(logger: PinoLogger, app: INestApplicationContext, database: Database, drain: (signal: string) => Promise<void>): void {
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    try {
      await drain(signal);
      await app.close();
      await database.close();
      await stopTracing();
      logger.info('stopped');
      logger.flush();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'unclean stop');
      logger.flush();
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
