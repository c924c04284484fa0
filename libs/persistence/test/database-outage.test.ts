import { randomUUID } from 'node:crypto';
import { ApplicationRepository, TenantRepository, UnavailableError } from '@gatehouse/domain';
import { FixedClock, RecordingAuditEventPublisher } from '@gatehouse/domain/testing';
import { Database, openDatabase, runMigrations } from '../src/database';
import { translateDatabaseError } from '../src/database-errors';
import { TypeormApplicationRepository } from '../src/repositories/typeorm-application.repository';
import { TypeormTenantRepository } from '../src/repositories/typeorm-tenant.repository';
import { RepositoryRegistry, TypeormUnitOfWork } from '../src/typeorm-unit-of-work';
import { DatabaseVaultCrypto } from '../src/vault/database-vault-crypto';
import { VaultKeyStore } from '../src/vault/vault-key-store';
import { testKeyWrapper } from '@gatehouse/test-support/test-vault';
import { PrivatePostgres, startPrivatePostgres } from '@gatehouse/test-support/private-postgres';
import { aPrivateApplication } from './persistence-backends';

// initdb, starts and stops of a real cluster, and a pool timeout of 5 s.
jest.setTimeout(120_000);

const NOW = new Date('2026-11-21T10:00:00.000Z');

const anApplication = (tenantId: string) => aPrivateApplication(tenantId, NOW);

/**
 * Every way a stopped, crashed or hung PostgreSQL shows itself to the adapters becomes an UnavailableError (a 503
 * with Retry-After over HTTP), never an unknown error (a 500). Against a cluster of this test's own, really stopped.
 */
describe('PostgreSQL outages become UnavailableError', () => {
  let pg: PrivatePostgres;
  let db: Database;
  const registry = new RepositoryRegistry()
    .register(ApplicationRepository, (em) => new TypeormApplicationRepository(em))
    .register(TenantRepository, (em) => new TypeormTenantRepository(em));
  let applications: ApplicationRepository;
  let tenantId: string;

  beforeAll(async () => {
    pg = await startPrivatePostgres();
    db = await openDatabase({ url: pg.url, dataDir: '', poolSize: 2 });
    await runMigrations(db);
    applications = registry.build(ApplicationRepository, db.dataSource.manager);
    tenantId = randomUUID();
    await registry.build(TenantRepository, db.dataSource.manager).insert({ id: tenantId, name: 'outage', createdAt: NOW });
  });
  afterAll(async () => {
    await db?.close().catch(() => undefined);
    pg?.remove();
  });

  /** What `attempt` rejects with; fails the test when it resolves. */
  async function failure(attempt: Promise<unknown>): Promise<unknown> {
    return attempt.then(
      () => {
        throw new Error('expected a failure');
      },
      (error: unknown) => error,
    );
  }

  function expectUnavailable(error: unknown) {
    if (!(error instanceof UnavailableError)) throw new Error(`not translated: ${String(error)} ${JSON.stringify(error)}`);
  }

  afterEach(async () => {
    pg.resume();
    if (!pg.running()) await restarted();
  });

  async function restarted() {
    pg.start();
    // The pool drops the connections that died; the next queries connect anew.
    for (let i = 0; i < 50; i++) {
      try {
        await applications.findById(tenantId, randomUUID());
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  it('a query cut by a crash (stop -m immediate)', async () => {
    const running = db.dataSource.query('SELECT pg_sleep(30)');
    await new Promise((resolve) => setTimeout(resolve, 300));
    pg.stopImmediate();
    expectUnavailable(translateDatabaseError(await failure(running)));
    expectUnavailable(await failure(applications.findById(tenantId, randomUUID())));
    await restarted();
  });

  it("a vault's key read, however the vault was built (the migrations build their own)", async () => {
    const vault = new DatabaseVaultCrypto(new VaultKeyStore(db.dataSource, testKeyWrapper()));
    pg.stopFast();
    // A tenant's first key is read (then made) in the database: it is down.
    expectUnavailable(await failure(vault.seal(randomUUID(), Buffer.from('secret'), 'aad')));
    await restarted();
  });

  it('a query ended by a fast shutdown (57P01), then refused connections', async () => {
    const running = db.dataSource.query('SELECT pg_sleep(30)');
    await new Promise((resolve) => setTimeout(resolve, 300));
    pg.stopFast();
    expectUnavailable(translateDatabaseError(await failure(running)));
    expectUnavailable(await failure(applications.findById(tenantId, randomUUID())));
    expectUnavailable(await failure(applications.insert(anApplication(tenantId))));
    await restarted();
  });

  it('a transaction whose commit meets a crash', async () => {
    const uow = new TypeormUnitOfWork(db.dataSource, registry, new RecordingAuditEventPublisher(), new FixedClock(NOW));
    const app = anApplication(tenantId);
    const error = await failure(
      uow.run(async (tx) => {
        await tx.get(ApplicationRepository).insert(app);
        pg.stopImmediate();
      }),
    );
    expectUnavailable(error);
    await restarted();
    expect(await applications.findById(tenantId, app.id)).toBeNull();
  });

  it('a transaction that cannot begin while the server is down', async () => {
    pg.stopFast();
    const uow = new TypeormUnitOfWork(db.dataSource, registry, new RecordingAuditEventPublisher(), new FixedClock(NOW));
    expectUnavailable(await failure(uow.run((tx) => tx.get(ApplicationRepository).insert(anApplication(tenantId)))));
    await restarted();
  });

  it('a connection lost between two statements of a transaction (no query running): no uncaught error, a 503', async () => {
    const uow = new TypeormUnitOfWork(db.dataSource, registry, new RecordingAuditEventPublisher(), new FixedClock(NOW));
    const error = await failure(
      uow.run(async (tx) => {
        await tx.get(ApplicationRepository).findById(tenantId, randomUUID());
        // The server goes away while the transaction's connection is idle: its client emits 'error'.
        pg.stopFast();
        await new Promise((resolve) => setTimeout(resolve, 300));
        await tx.get(ApplicationRepository).insert(anApplication(tenantId));
      }),
    );
    expectUnavailable(error);
    await restarted();
  });

  it('a hung server: connections that never answer end in the pool timeout', async () => {
    // Fresh connections are needed: the pool's idle ones are kept, so take them all out of play first.
    await db.close();
    db = await openDatabase({ url: pg.url, dataDir: '', poolSize: 2 });
    applications = registry.build(ApplicationRepository, db.dataSource.manager);
    // The pool's one open connection (TypeORM's own, from initialize) is held, so the next query needs a new one.
    const busy = db.dataSource.createQueryRunner();
    await busy.connect();
    pg.pause();
    try {
      const error = await failure(applications.findById(tenantId, randomUUID()));
      expectUnavailable(error);
    } finally {
      pg.resume();
      await busy.release();
    }
  });
});
