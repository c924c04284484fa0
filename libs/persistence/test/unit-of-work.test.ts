import { randomUUID } from 'node:crypto';
import {
  Application,
  ApplicationRepository,
  AuditEvent,
  AuditEventPublisher,
  ConflictError,
  InvalidDataError,
  NewAuditEvent,
  TenantRepository,
} from '@gatehouse/domain';
import { FixedClock, RecordingAuditEventPublisher } from '@gatehouse/domain/testing';
import { RepositoryRegistry, TypeormApplicationRepository, TypeormTenantRepository, TypeormUnitOfWork } from '@gatehouse/persistence';
import { aPrivateApplication, DATABASES, newTenant as tenantIn, OpenedBackend, openForSuite } from './persistence-backends';

const NOW = new Date('2026-11-21T10:00:00.000Z');

function anApplication(tenantId: string, over: Partial<Application> = {}): Application {
  return aPrivateApplication(tenantId, NOW, over);
}

class FailingPublisher extends AuditEventPublisher {
  async publish(): Promise<void> {
    throw new Error('queue down');
  }
}

describe.each(DATABASES)('TypeormUnitOfWork on $name', (backend) => {
  let db: OpenedBackend;
  const registry = new RepositoryRegistry()
    .register(ApplicationRepository, (em) => new TypeormApplicationRepository(em))
    .register(TenantRepository, (em) => new TypeormTenantRepository(em));

  openForSuite(backend, (opened) => (db = opened));

  function unitOfWork(publisher: AuditEventPublisher = new RecordingAuditEventPublisher(), onPublishError?: (e: unknown) => void) {
    return new TypeormUnitOfWork(db.dataSource, registry, publisher, new FixedClock(NOW), onPublishError);
  }

  const newTenant = (): Promise<string> => tenantIn(db.tenants, NOW);

  async function outboxFor(entityId: string) {
    return db.dataSource.query(
      `SELECT id, tenant_id, actor_id, actor_type, entity_type, entity_id, operation, message, created_at
         FROM audit_outbox WHERE entity_id = $1 ORDER BY created_at, id`,
      [entityId],
    );
  }

  function created(app: Application, actorId: string | null = randomUUID()): NewAuditEvent {
    return {
      tenantId: app.tenantId,
      actor: { id: actorId, type: actorId ? 'application' : 'system' },
      entityType: 'application',
      entityId: app.id,
      operation: 'create',
      message: `Application '${app.name}' created`,
    };
  }

  it('writes the change and its outbox row together, then publishes the same event', async () => {
    const tenantId = await newTenant();
    const app = anApplication(tenantId);
    const actorId = randomUUID();
    const publisher = new RecordingAuditEventPublisher();
    const result = await unitOfWork(publisher).run(async (tx) => {
      await tx.get(ApplicationRepository).insert(app);
      tx.record(created(app, actorId));
      return 'done';
    });
    expect(result).toBe('done');
    expect(await db.applications.findById(tenantId, app.id)).toEqual(app);
    const rows = await outboxFor(app.id);
    expect(rows).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        tenant_id: tenantId,
        actor_id: actorId,
        actor_type: 'application',
        entity_type: 'application',
        entity_id: app.id,
        operation: 'create',
        message: "Application 'backend' created",
        created_at: NOW,
      },
    ]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(publisher.published).toEqual<AuditEvent[]>([
      {
        id: rows[0].id,
        tenantId,
        actorId,
        actorType: 'application',
        entityType: 'application',
        entityId: app.id,
        operation: 'create',
        message: "Application 'backend' created",
        createdAt: NOW,
      },
    ]);
  });

  it('writes one outbox row per recorded event, a system actor included', async () => {
    const tenantId = await newTenant();
    const app = anApplication(tenantId);
    await unitOfWork().run(async (tx) => {
      await tx.get(ApplicationRepository).insert(app);
      tx.record(created(app, null));
      tx.record({ ...created(app), operation: 'update', message: 'second' });
    });
    const rows = await outboxFor(app.id);
    expect(rows.map((r: { operation: string; actor_type: string; actor_id: string | null }) => [r.operation, r.actor_type, r.actor_id === null])).toEqual(
      expect.arrayContaining([
        ['create', 'system', true],
        ['update', 'application', false],
      ]),
    );
    expect(rows).toHaveLength(2);
  });

  it('rolls back the change and its outbox row when the work throws, and publishes nothing', async () => {
    const tenantId = await newTenant();
    const app = anApplication(tenantId);
    const publisher = new RecordingAuditEventPublisher();
    const failure = new Error('validation failed after the insert');
    await expect(
      unitOfWork(publisher).run(async (tx) => {
        await tx.get(ApplicationRepository).insert(app);
        tx.record(created(app));
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await db.applications.findById(tenantId, app.id)).toBeNull();
    expect(await outboxFor(app.id)).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(publisher.published).toEqual([]);
  });

  it('turns a duplicate key hash into a ConflictError, rolling back everything before it', async () => {
    const tenantId = await newTenant();
    const existing = anApplication(tenantId);
    await db.applications.insert(existing);
    const first = anApplication(tenantId);
    const clash = anApplication(tenantId, { keyHash: existing.keyHash });
    await expect(
      unitOfWork().run(async (tx) => {
        const repo = tx.get(ApplicationRepository);
        await repo.insert(first);
        tx.record(created(first));
        await repo.insert(clash);
        tx.record(created(clash));
      }),
    ).rejects.toBeInstanceOf(ConflictError);
    expect(await db.applications.findById(tenantId, first.id)).toBeNull();
    expect(await db.applications.findById(tenantId, clash.id)).toBeNull();
    expect(await outboxFor(first.id)).toEqual([]);
    expect(await outboxFor(clash.id)).toEqual([]);
  });

  it('turns a duplicate key hash on update into a ConflictError too', async () => {
    const tenantId = await newTenant();
    const a = anApplication(tenantId);
    const b = anApplication(tenantId);
    await db.applications.insert(a);
    await db.applications.insert(b);
    await expect(unitOfWork().run((tx) => tx.get(ApplicationRepository).update({ ...b, keyHash: a.keyHash }))).rejects.toBeInstanceOf(ConflictError);
    expect((await db.applications.findById(tenantId, b.id))?.keyHash).toBe(b.keyHash);
  });

  it('turns a value PostgreSQL cannot store into an InvalidDataError naming only its SQLSTATE, in and out of a unit of work', async () => {
    const tenantId = await newTenant();
    const secret = 'sk_live_do_not_log';
    const app = anApplication(tenantId, { name: `${secret}\u0000` });
    const outside = await registry
      .build(ApplicationRepository, db.dataSource.manager)
      .insert(app)
      .catch((e: unknown) => e);
    const inside = await unitOfWork()
      .run((tx) => tx.get(ApplicationRepository).insert(app))
      .catch((e: unknown) => e);
    for (const error of [outside, inside]) {
      expect(error).toBeInstanceOf(InvalidDataError);
      expect(error).toMatchObject({ code: 'validation', reason: expect.stringMatching(/^22[0-9A-Z]{3}$/) });
      expect(JSON.stringify({ ...(error as object), message: (error as Error).message })).not.toContain(secret);
    }
    expect(await db.applications.findById(tenantId, app.id)).toBeNull();
  });

  it('commits the audit events of concurrent reads (record) before each call resolves, as one statement, and publishes each once', async () => {
    const publisher = new RecordingAuditEventPublisher();
    const uow = unitOfWork(publisher);
    const tenantId = await newTenant();
    const apps = Array.from({ length: 20 }, (_, i) => ({ tenantId, id: randomUUID(), name: `read-${i}` }) as Application);
    const statements: string[] = [];
    const spy = jest.spyOn(db.dataSource, 'query');
    await Promise.all(
      apps.map(async (app) => {
        await uow.record([
          { ...created(app), operation: 'read', message: 'read' },
          { ...created(app), operation: 'read', message: 'again' },
        ]);
        // Durable once record resolves: the rows are there for another session to see.
        statements.push(...((await outboxFor(app.id)) as { message: string }[]).map((row) => `${app.name}:${row.message}`));
      }),
    );
    expect(statements.sort()).toEqual(apps.flatMap((app) => [`${app.name}:again`, `${app.name}:read`]).sort());
    // Fewer INSERTs than reads: the first went alone, the others waited and went together.
    const inserts = spy.mock.calls.filter(([sql]) => String(sql).startsWith('INSERT INTO audit_outbox')).length;
    expect(inserts).toBeGreaterThan(0);
    expect(inserts).toBeLessThan(apps.length);
    spy.mockRestore();
    const published = publisher.published.filter((event) => event.tenantId === tenantId);
    expect(published).toHaveLength(40);
    expect(new Set(published.map((event) => event.id)).size).toBe(40);
    // Days old (the fixed clock): left in the shared outbox, they would be the first rows of another suite's relay.
    await db.dataSource.query('DELETE FROM audit_outbox WHERE tenant_id = $1', [tenantId]);
  });

  it('writes no outbox row and publishes nothing when nothing was recorded', async () => {
    const tenantId = await newTenant();
    const app = anApplication(tenantId);
    const publisher = new RecordingAuditEventPublisher();
    await unitOfWork(publisher).run((tx) => tx.get(ApplicationRepository).insert(app));
    expect(await db.applications.findById(tenantId, app.id)).not.toBeNull();
    expect(await outboxFor(app.id)).toEqual([]);
    expect(publisher.published).toEqual([]);
  });

  it('keeps the committed change and its outbox row when publishing fails', async () => {
    const tenantId = await newTenant();
    const app = anApplication(tenantId);
    const reported: unknown[] = [];
    await unitOfWork(new FailingPublisher(), (e) => reported.push(e)).run(async (tx) => {
      await tx.get(ApplicationRepository).insert(app);
      tx.record(created(app));
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(reported).toEqual([expect.objectContaining({ message: 'queue down' })]);
    expect(await db.applications.findById(tenantId, app.id)).not.toBeNull();
    expect(await outboxFor(app.id)).toHaveLength(1);
  });

  it('binds the repositories it hands out to the transaction', async () => {
    const tenantId = await newTenant();
    const app = anApplication(tenantId);
    const seenInside = await unitOfWork().run(async (tx) => {
      await tx.get(ApplicationRepository).insert(app);
      return tx.get(ApplicationRepository).findById(tenantId, app.id);
    });
    expect(seenInside).toEqual(app);
  });

  if (backend.name === 'PostgreSQL') {
    // PGlite holds a single connection, so another session cannot look while the transaction is open.
    it('shows nothing of an open transaction to other sessions', async () => {
      const tenantId = await newTenant();
      const app = anApplication(tenantId);
      let seenOutside: unknown = 'not looked';
      let outboxOutside: unknown[] = [];
      await unitOfWork().run(async (tx) => {
        await tx.get(ApplicationRepository).insert(app);
        tx.record(created(app));
        seenOutside = await db.applications.findById(tenantId, app.id);
        outboxOutside = await outboxFor(app.id);
      });
      expect(seenOutside).toBeNull();
      expect(outboxOutside).toEqual([]);
      expect(await outboxFor(app.id)).toHaveLength(1);
    });

    // A command checks what it read (e.g. the caller's authority over an application) and then writes: a concurrent
    // change between the two must wait, or a check could pass on a row that no longer is what it saw.
    it('findByIdForChange holds the row until the unit of work ends', async () => {
      const tenantId = await newTenant();
      const app = anApplication(tenantId);
      await db.applications.insert(app);
      const order: string[] = [];
      let releaseFirst!: () => void;
      const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
      let firstLocked!: () => void;
      const locked = new Promise<void>((resolve) => (firstLocked = resolve));
      const first = unitOfWork().run(async (tx) => {
        await tx.get(ApplicationRepository).findByIdForChange(tenantId, app.id);
        firstLocked();
        await firstHolds;
        await tx.get(ApplicationRepository).update({ ...app, name: 'first' });
        order.push('first wrote');
      });
      await locked;
      const second = unitOfWork().run(async (tx) => {
        const seen = await tx.get(ApplicationRepository).findByIdForChange(tenantId, app.id);
        order.push(`second read ${seen?.name}`);
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      order.push('released');
      releaseFirst();
      await Promise.all([first, second]);
      expect(order).toEqual(['released', 'first wrote', 'second read first']);
    });
  }

  it('throws the unknown failure of a repository unchanged', async () => {
    // An application of a tenant that does not exist breaks the foreign key: not a conflict.
    const orphan = anApplication(randomUUID());
    const error = await unitOfWork()
      .run((tx) => tx.get(ApplicationRepository).insert(orphan))
      .catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(ConflictError);
    expect(error).toBeInstanceOf(Error);
    expect(await db.applications.findById(orphan.tenantId, orphan.id)).toBeNull();
  });
});
