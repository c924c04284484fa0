import type { LoggerService } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Logger } from 'pino';
import request from 'supertest';
import { AppConfig, loadConfig } from '@gatehouse/config';
import { CreatedTenant, CreateTenant } from '@gatehouse/domain';
import { Database, openDatabase } from '@gatehouse/persistence';
import { createApiApp } from '@gatehouse/api';
import { TEST_DATABASE_URL, TEST_LOG_SIGNING_KEY, TEST_VAULT_KEY } from './test-env';

export interface TestApp {
  app: NestExpressApplication;
  database: Database;
  config: AppConfig;
  http: () => ReturnType<typeof request>;
  /** A new tenant with its management key: each test works in tenants of its own. */
  tenant: (name?: string) => Promise<CreatedTenant>;
  close: () => Promise<void>;
}

/** Where a test app's logs go: nowhere unless a test looks at them. */
export interface TestAppLogs {
  logger?: LoggerService;
  accessLog?: Logger;
}

/** The whole API over the migrated test database (global setup, or env.DATABASE_URL), without listening on a port. */
export async function startTestApp(env: Record<string, string> = {}, logs: TestAppLogs = {}): Promise<TestApp> {
  // A test may bring its own (migrated) database, e.g. a private cluster it stops.
  const url = env.DATABASE_URL ?? TEST_DATABASE_URL;
  const config = loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent', LOG_SIGNING_KEY: TEST_LOG_SIGNING_KEY, VAULT_KEY: TEST_VAULT_KEY, ...env });
  const database = await openDatabase({ url, dataDir: '', poolSize: 5, statementTimeoutMs: config.databaseStatementTimeoutMs });
  const app = await createApiApp({ config, database, runJobs: false, logger: logs.logger ?? false, accessLog: logs.accessLog });
  const server = app.getHttpServer();
  return {
    app,
    database,
    config,
    http: () => request(server),
    tenant: (name = `tenant-${Math.random().toString(36).slice(2, 10)}`) => app.get(CreateTenant).execute(name),
    close: async () => {
      await app.close();
      await database.close();
    },
  };
}
