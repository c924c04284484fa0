import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { Application, ApplicationRepository, generateApiKey, hashApiKey, newApplicationRecord, TenantRepository } from '@gatehouse/domain';
import { Database, openDatabase, runMigrations, TypeormApplicationRepository, TypeormTenantRepository } from '@gatehouse/persistence';
import { TEST_DATABASE_URL } from '@gatehouse/test-support/test-env';

/** One database the persistence suites run against: the real PostgreSQL of the test tier, or an embedded PGlite. */
export interface OpenedBackend {
  database: Database;
  dataSource: DataSource;
  applications: ApplicationRepository;
  tenants: TenantRepository;
  close(): Promise<void>;
}

export interface Backend {
  name: string;
  open(): Promise<OpenedBackend>;
}

function over(database: Database, cleanup: () => void = () => undefined): OpenedBackend {
  const em = database.dataSource.manager;
  return {
    database,
    dataSource: database.dataSource,
    applications: new TypeormApplicationRepository(em),
    tenants: new TypeormTenantRepository(em),
    close: async () => {
      await database.close();
      cleanup();
    },
  };
}

export const POSTGRES: Backend = {
  name: 'PostgreSQL',
  // Migrated once by the global setup; each test works in tenants of its own.
  open: async () => over(await openDatabase({ url: TEST_DATABASE_URL, dataDir: '', poolSize: 4 })),
};

export const PGLITE: Backend = {
  name: 'embedded PGlite',
  open: async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-pglite-'));
    const database = await openDatabase({ dataDir });
    await runMigrations(database);
    return over(database, () => rmSync(dataDir, { recursive: true, force: true }));
  },
};

export const DATABASES: Backend[] = [POSTGRES, PGLITE];

/**
 * For the hook that opens a backend: PGlite starts in about 2 s on an idle machine, but took over 60 s inside Jest
 * at a load average of 15 (20 s on its own).
 */
export const PGLITE_OPEN_TIMEOUT_MS = 180_000;

/**
 * Opens `backend` before the suite's tests (PGlite's hook may take PGLITE_OPEN_TIMEOUT_MS) and closes it after them;
 * `use` gets what was opened, for the suite's `db`.
 */
export function openForSuite<T extends { close(): Promise<void> }>(backend: { open(): Promise<T> }, use: (opened: T) => void): void {
  let opened: T | undefined;
  beforeAll(async () => {
    opened = await backend.open();
    use(opened);
  }, PGLITE_OPEN_TIMEOUT_MS);
  afterAll(() => opened?.close(), 30_000);
}

/** A tenant of its own for one test, created at `createdAt`: its id. */
export async function newTenant(tenants: TenantRepository, createdAt: Date): Promise<string> {
  const id = randomUUID();
  await tenants.insert({ id, name: `t-${id}`, createdAt });
  return id;
}

/** A private application of `tenantId` created at `createdAt`, for the suites that only need some row. */
export function aPrivateApplication(tenantId: string, createdAt: Date, over: Partial<Application> = {}): Application {
  return newApplicationRecord({
    id: randomUUID(),
    tenantId,
    name: 'backend',
    type: 'private',
    permissions: ['token:read'],
    keyHash: hashApiKey(generateApiKey()),
    createdAt,
    ...over,
  });
}
