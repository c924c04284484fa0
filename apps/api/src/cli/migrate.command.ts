import { CliCommand } from './command';

export const MIGRATE_COMMAND: CliCommand = {
  name: 'migrate',
  synopsis: '',
  summary: 'apply pending database migrations (the service also does at start)',
  async run(_args, context) {
    const { database, migrationsApplied } = await context();
    const { runMigrations } = await import('./open-database');
    const applied = [...migrationsApplied, ...(await runMigrations(database))];
    return applied.length === 0 ? 'no pending migrations\n' : `applied ${applied.length} migration(s): ${applied.join(', ')}\n`;
  },
};
