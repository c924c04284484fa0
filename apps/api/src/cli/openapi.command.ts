import { loadConfig } from '@gatehouse/config';
import { DataSource } from 'typeorm';
import { createApiApp } from '../app';
import { buildOpenApiDocument } from '../openapi';
import { CliCommand } from './command';

export const OPENAPI_COMMAND: CliCommand = {
  name: 'openapi',
  synopsis: '',
  summary: 'print the OpenAPI document (npm run openapi writes apps/api/openapi.json)',
  async run() {
    return `${JSON.stringify(await openApiDocument(), null, 2)}\n`;
  },
};

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
