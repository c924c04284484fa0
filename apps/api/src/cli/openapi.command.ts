import { loadConfig } from '@gatehouse/config';
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
  // Loaded here, not at the top: the CLI's other commands and its help do without them.
  const { DataSource } = await import('typeorm');
  const { createApiApp } = await import('../app');
  const { buildOpenApiDocument } = await import('../openapi');
  const database = { dataSource: new DataSource({ type: 'postgres' }), embedded: false, close: async () => undefined };
  const app = await createApiApp({ config: loadConfig({}), database, runJobs: false, logger: false });
  try {
    return buildOpenApiDocument(app);
  } finally {
    await app.close();
  }
}
