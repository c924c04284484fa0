import { Logger as PinoLogger } from 'pino';
import { AppConfig, ConfigError, loadConfig } from '@gatehouse/config';
import { CreatedTenant, CreateTenant, TenantRepository } from '@gatehouse/domain';
import { Database, openDatabase, runMigrations } from '@gatehouse/persistence';
import { INestApplicationContext } from '@nestjs/common';

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
    applicationName,
  });
  const applied = await runMigrations(database);
  logger?.info({ embedded: database.embedded, migrations_applied: applied }, 'database ready');
  return database;
}

/** On an empty database, the tenant `default` and its first management application (CONTRACT.md section 9). */
export async function ensureFirstTenant(app: INestApplicationContext): Promise<CreatedTenant | undefined> {
  if ((await app.get(TenantRepository).count()) > 0) return undefined;
  try {
    return await app.get(CreateTenant).execute('default');
  } catch (error) {
    // Another replica starting at the same moment created it first.
    if ((error as { code?: string }).code === 'conflict') return undefined;
    throw error;
  }
}

export function firstKeyBanner(created: CreatedTenant): string {
  return [
    '',
    '================================================================',
    ` Tenant 'default' created (${created.tenant.id}).`,
    ' Its management API key, shown once, is:',
    '',
    `   ${created.key}`,
    '',
    ' Send it as the SVC-API-KEY header, e.g.:',
    `   curl -H 'SVC-API-KEY: ${created.key}' http://localhost:PORT/applications`,
    '================================================================',
    '',
  ].join('\n');
}
