import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from '@gatehouse/config';
import { CreateTenant } from '@gatehouse/domain';
import { createApiApp } from './app';
import { toApplicationResponse } from './applications/applications.dto';
import { loadConfigOrExit, openMigratedDatabase } from './bootstrap';
import { buildOpenApiDocument } from './openapi';
import { TENANT_RATE_LIMIT_USAGE, tenantRateLimitCommand } from './cli/tenant-rate-limit.command';
import { logsVerifyCommand, LOGS_VERIFY_USAGE } from './logs/logs-verify.command';

const USAGE = `usage:
  gatehouse tenant create --name NAME [--json]   create a tenant and its first management key
${TENANT_RATE_LIMIT_USAGE}
  gatehouse migrate                              apply pending database migrations
  gatehouse openapi                              print the OpenAPI document
${LOGS_VERIFY_USAGE}`;

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

async function main(args: string[]): Promise<number> {
  const [command, sub] = args;
  if (command === 'tenant' && sub === 'rate-limit') return tenantRateLimitCommand(args.slice(2));
  if (command === 'tenant' && sub === 'create') {
    const name = option(args, '--name');
    if (!name) {
      process.stderr.write(`${USAGE}\n`);
      return 2;
    }
    const config = loadConfigOrExit();
    const database = await openMigratedDatabase(config);
    const app = await createApiApp({ config, database, runJobs: false, logger: false });
    try {
      const created = await app.get(CreateTenant).execute(name);
      const result = {
        tenant: { id: created.tenant.id, name: created.tenant.name },
        application: toApplicationResponse(created.application, created.key),
      };
      process.stdout.write(
        args.includes('--json')
          ? `${JSON.stringify(result, null, 2)}\n`
          : `tenant ${result.tenant.id} (${name}) created\nmanagement key: ${created.key}\n`,
      );
      return 0;
    } finally {
      await app.close();
      await database.close();
    }
  }
  if (command === 'logs' && sub === 'verify') return logsVerifyCommand(args.slice(2));
  if (command === 'migrate') {
    const config = loadConfigOrExit();
    const database = await openMigratedDatabase(config);
    await database.close();
    process.stdout.write('migrations applied\n');
    return 0;
  }
  if (command === 'openapi') {
    process.stdout.write(`${JSON.stringify(await openApiDocument(), null, 2)}\n`);
    return 0;
  }
  process.stderr.write(`${USAGE}\n`);
  return 2;
}

/** The document needs only the routes, not a database: built over an unopened one. */
async function openApiDocument(): Promise<unknown> {
  const database = { dataSource: new DataSource({ type: 'postgres' }), embedded: false, close: async () => undefined };
  const app = await createApiApp({ config: loadConfig({}), database, runJobs: false, logger: false });
  try {
    return buildOpenApiDocument(app);
  } finally {
    await app.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    const message = (error as { fieldErrors?: unknown }).fieldErrors
      ? JSON.stringify((error as { fieldErrors: unknown }).fieldErrors)
      : error instanceof Error
        ? error.message
        : String(error);
    process.stderr.write(`gatehouse: ${message}\n`);
    process.exit(1);
  },
);
