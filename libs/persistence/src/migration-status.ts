import { DataSource, MigrationExecutor } from 'typeorm';

/** Where a database stands against the migrations this release ships, read without changing anything. */
export interface MigrationStatus {
  /** This release's migrations the database has, in order. */
  applied: string[];
  /** This release's migrations the database lacks, in the order they would run. */
  pending: string[];
  /** Migrations the database has that this release does not know (a newer release migrated it). */
  unknown: string[];
}

/** Reads the migrations table (absent on an empty database: everything is pending); creates nothing. */
export async function migrationStatus(dataSource: DataSource): Promise<MigrationStatus> {
  const executor = new MigrationExecutor(dataSource);
  const executed = new Set((await executor.getExecutedMigrations()).map((m) => m.name));
  // In the order TypeORM runs them: by the timestamp that ends each name.
  const shipped = dataSource.migrations.map((m) => m.name ?? m.constructor.name).sort((a, b) => Number(a.slice(-13)) - Number(b.slice(-13)));
  const known = new Set(shipped);
  return {
    applied: shipped.filter((name) => executed.has(name)),
    pending: shipped.filter((name) => !executed.has(name)),
    unknown: [...executed].filter((name) => !known.has(name)),
  };
}

/**
 * The one line a process started with MIGRATE_ON_START=false gives when the database is behind: it must not apply the
 * migrations itself (its role may lack DDL rights), so it says what to run instead.
 */
export function pendingMigrationsLine(pending: string[]): string {
  return (
    `${pending.length} database migration(s) pending (${pending[0]}${pending.length > 1 ? ', ...' : ''}) and MIGRATE_ON_START=false: ` +
    'run `gatehouse migrate` (the migration Job) first, or set MIGRATE_ON_START=true'
  );
}
