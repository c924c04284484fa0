import 'reflect-metadata';
import type { Database } from '@gatehouse/persistence';
import type { INestApplication } from '@nestjs/common';
import { loadConfig } from '@gatehouse/config';
import { CommandContext } from './cli/command';
import { runInOwner } from './cli/control-socket';
import { CliResult, ContextOpener, errorLine, execute, isDataDirInUse } from './cli/execute';

/** The `gatehouse` command line (bin/gatehouse.js runs this file from dist). */
async function main(argv: string[]): Promise<CliResult> {
  try {
    return await execute(argv, standaloneOpener());
  } catch (error) {
    if (!isDataDirInUse(error)) throw error;
    // `npm start` owns the embedded database: the command runs in it (see cli/control-socket.ts).
    return runInOwner(error.controlSocketPath, argv);
  }
}

/**
 * This process opens the database, applies pending migrations, and builds the service's providers over it. The
 * database and the app are loaded only then, so `--help` and wrong arguments answer at once.
 */
function standaloneOpener(): ContextOpener {
  let database: Database | undefined;
  let app: INestApplication | undefined;
  return {
    async open(): Promise<CommandContext> {
      const config = loadConfig();
      const { openDatabase, runMigrations } = await import('@gatehouse/persistence');
      const { createApiApp } = await import('./app');
      database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: 2, applicationName: 'gatehouse-cli' });
      const migrationsApplied = await runMigrations(database);
      app = await createApiApp({ config, database, runJobs: false, logger: false });
      return { app, database, config, migrationsApplied };
    },
    async close(): Promise<void> {
      await app?.close();
      await database?.close();
    },
  };
}

main(process.argv.slice(2)).then(
  (result) => {
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    process.exit(result.code);
  },
  (error: unknown) => {
    process.stderr.write(`gatehouse: ${errorLine(error)}\n`);
    process.exit(1);
  },
);
