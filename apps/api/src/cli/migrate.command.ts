import type { Database, MigrationStatus } from '@gatehouse/persistence';
import { CliCommand, printJson } from './command';

export const MIGRATE_COMMAND: CliCommand = {
  name: 'migrate',
  synopsis: '',
  summary: 'apply pending database migrations (the service also does at start, unless MIGRATE_ON_START=false)',
  async run(_args, context) {
    const { database, migrationsApplied } = await context();
    const { runMigrations } = await import('./open-database');
    const applied = [...migrationsApplied, ...(await runMigrations(database))];
    return applied.length === 0 ? 'no pending migrations\n' : `applied ${applied.length} migration(s): ${applied.join(', ')}\n`;
  },
};

/** `migrate status` and `migrate check` read the migrations table and change nothing (no migration, no table). */
async function readStatus(database: () => Promise<Database>): Promise<MigrationStatus> {
  const { migrationStatus } = await import('./open-database');
  return migrationStatus((await database()).dataSource);
}

export const MIGRATE_STATUS_COMMAND: CliCommand = {
  name: 'migrate status',
  synopsis: '[--json]',
  summary: "list this release's migrations, applied [x] or pending [ ], without applying any",
  options: { json: { type: 'boolean' } },
  async run({ values }, _context, database) {
    const status = await readStatus(database);
    if (values.json) return printJson(status);
    return [
      ...status.applied.map((name) => `[x] ${name}`),
      ...status.pending.map((name) => `[ ] ${name}`),
      ...status.unknown.map((name) => `[?] ${name} (applied by a newer release)`),
      summary(status),
      '',
    ].join('\n');
  },
};

export const MIGRATE_CHECK_COMMAND: CliCommand = {
  name: 'migrate check',
  synopsis: '',
  summary: 'exit 0 when the database has every migration of this release, 1 when any is pending (applies none)',
  async run(_args, _context, database) {
    const status = await readStatus(database);
    return { stdout: `${summary(status)}\n`, code: status.pending.length > 0 ? 1 : 0 };
  },
};

function summary({ applied, pending, unknown }: MigrationStatus): string {
  const state = pending.length > 0 ? `${pending.length} pending: run \`gatehouse migrate\`` : 'up to date';
  return `${applied.length} applied, ${state}${unknown.length > 0 ? `; ${unknown.length} unknown to this release (${unknown.join(', ')})` : ''}`;
}
