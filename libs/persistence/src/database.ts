import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { lockDataDir } from './embedded-lock';
import { ownerOnlyNodeFs } from './owner-only-nodefs';
import { ENTITIES, MIGRATIONS } from './schema';
import { MigrationVaultOptions, withMigrationVaultOptions } from './vault/migration-vault';

export interface DatabaseOptions {
  /** A PostgreSQL URL; without one an embedded PGlite keeps its files in `dataDir`. */
  url?: string;
  dataDir: string;
  poolSize?: number;
  applicationName?: string;
  /**
   * PostgreSQL only (not the embedded database): a statement running longer is cancelled by the server
   * (`statement_timeout`, SQLSTATE 57014), and one the server never answers (a hung host, a network partition)
   * fails on the client QUERY_TIMEOUT_GRACE_MS later (`query_timeout`); both are 503s. 0 or absent: no limit.
   * Migrations run without it (a large index may take long; waiting for another replica's migration lock too).
   */
  statementTimeoutMs?: number;
}

/** How long after the server should have cancelled a statement the client stops waiting for its answer. */
export const QUERY_TIMEOUT_GRACE_MS = 2000;

export interface Database {
  dataSource: DataSource;
  embedded: boolean;
  /** Embedded only: where this process, the owner of DATA_DIR, may answer other processes (the CLI). */
  controlSocketPath?: string;
  /** Embedded only: what the operator should fix about DATA_DIR (readable by others...), for the start-up log. */
  warnings?: string[];
  close(): Promise<void>;
}

// Serialises migration runs of replicas that start together (api and worker against one database).
const MIGRATION_LOCK_KEY = 0x6761_7465;

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.url) {
    const dataSource = createDataSource({ url: options.url }, options.poolSize ?? 10, options.applicationName, options.statementTimeoutMs);
    await dataSource.initialize();
    keepConnectionErrorsHandled(dataSource);
    return { dataSource, embedded: false, close: () => dataSource.destroy() };
  }
  return openEmbedded(options);
}

/** A URL, or (the embedded database) the directory of a Unix socket: pg takes a directory as a host. */
type Target = { url: string } | { host: string; port: number; username: string; database: string };

function createDataSource(target: Target, poolSize: number, applicationName = 'gatehouse', statementTimeoutMs = 0): DataSource {
  return new DataSource({
    type: 'postgres',
    ...target,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    logging: false,
    applicationName,
    extra: {
      max: poolSize,
      connectionTimeoutMillis: 5000,
      ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs, query_timeout: statementTimeoutMs + QUERY_TIMEOUT_GRACE_MS } : {}),
    },
  });
}

interface ErrorEmitter {
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * A pg client that loses its connection while checked out of the pool but between queries (in a transaction, while the
 * code between two statements runs) emits `error`; the pool listens only while a client is idle, and TypeORM not at
 * all, so a PostgreSQL shutdown or crash at that moment was an uncaught exception that ended the process. Every client
 * gets a listener for its whole life when first handed out; the failure itself surfaces as the client's next query
 * failing, which the repositories translate into a 503.
 */
function keepConnectionErrorsHandled(dataSource: DataSource): void {
  const pool = (dataSource.driver as unknown as { master?: { on(event: 'acquire', listener: (client: ErrorEmitter) => void): unknown } }).master;
  const handled = new WeakSet<ErrorEmitter>();
  pool?.on('acquire', (client) => {
    if (handled.has(client)) return;
    handled.add(client);
    client.on('error', () => undefined);
  });
}

/**
 * PGlite behind its socket server, so the ordinary `pg` driver (and the same entities and migrations) work
 * on both. PGlite runs one query at a time, so the pool holds one connection.
 */
async function openEmbedded(options: DatabaseOptions): Promise<Database> {
  // Before PGlite touches a file: a second process would open the same files and lose writes (DataDirInUseError).
  const lock = await lockDataDir(options.dataDir);
  try {
    const { PGlite } = await import('@electric-sql/pglite');
    const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
    const db = await PGlite.create({ fs: await ownerOnlyNodeFs(options.dataDir) });
    // A Unix socket in an owner-only directory, not a loopback port: PGlite has no authentication, and any local user
    // could connect to a TCP port and read the database.
    const socket = embeddedSocket(options.dataDir);
    const server = new PGLiteSocketServer({ db, path: socket.path });
    await server.start();
    const dataSource = createDataSource(
      { host: socket.dir, port: EMBEDDED_SOCKET_PORT, username: 'postgres', database: 'postgres' },
      1,
      options.applicationName,
    );
    await dataSource.initialize();
    keepConnectionErrorsHandled(dataSource);
    return {
      dataSource,
      embedded: true,
      controlSocketPath: lock.controlSocketPath,
      warnings: lock.warnings,
      close: async () => {
        await dataSource.destroy();
        await server.stop();
        socket.remove();
        await db.close();
        await lock.release();
      },
    };
  } catch (error) {
    await lock.release();
    throw error;
  }
}

// The port only names the socket file (`.s.PGSQL.5432`); nothing listens on it.
const EMBEDDED_SOCKET_PORT = 5432;

/**
 * Where the embedded database's socket goes: in DATA_DIR (owner-only; a socket left by a crashed owner is replaced:
 * this process holds the directory's lock), or, when that path is too long for a socket (about 100 bytes), in an
 * owner-only directory of its own under the temporary directory.
 */
function embeddedSocket(dataDir: string): { dir: string; path: string; remove(): void } {
  const name = `.s.PGSQL.${EMBEDDED_SOCKET_PORT}`;
  const inDataDir = realpathSync(dataDir);
  const own = Buffer.byteLength(join(inDataDir, name)) > 100;
  const dir = own ? mkdtempSync(join(tmpdir(), 'gatehouse-pg-')) : inDataDir;
  const path = join(dir, name);
  rmSync(path, { force: true });
  return { dir, path, remove: () => rmSync(own ? dir : path, { recursive: true, force: true }) };
}

/**
 * Applies pending migrations under an advisory lock; returns the names applied. `vault`: the key-encryption key and
 * progress reporting of migrations that seal rows (by default the environment's key, progress on stderr).
 */
export async function runMigrations(database: Database, vault: MigrationVaultOptions = {}): Promise<string[]> {
  return withMigrationVaultOptions(vault, () => migrate(database));
}

async function migrate(database: Database): Promise<string[]> {
  const { dataSource } = database;
  if (database.embedded) {
    // One process owns an embedded database, and its single connection could not hold a lock besides.
    return (await dataSource.runMigrations({ transaction: 'each' })).map((m) => m.name);
  }
  // Connections of their own, without the statement timeout: a migration may build a large index, and a replica
  // waits here for as long as another one migrates.
  const extra = { ...(dataSource.options as { extra?: Record<string, unknown> }).extra, max: 2, statement_timeout: undefined, query_timeout: undefined };
  const unbounded = new DataSource({ ...dataSource.options, extra } as typeof dataSource.options);
  await unbounded.initialize();
  keepConnectionErrorsHandled(unbounded);
  try {
    const runner = unbounded.createQueryRunner();
    await runner.connect();
    try {
      await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      try {
        const applied = await unbounded.runMigrations({ transaction: 'each' });
        return applied.map((m) => m.name);
      } finally {
        await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
      }
    } finally {
      await runner.release();
    }
  } finally {
    await unbounded.destroy();
  }
}
