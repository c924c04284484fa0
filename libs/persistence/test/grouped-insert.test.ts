import { randomUUID } from 'node:crypto';
import { ConflictError, InvalidDataError, NewAuditEvent, Token, TokenRepository } from '@gatehouse/domain';
import { FixedClock, RecordingAuditEventPublisher } from '@gatehouse/domain/testing';
import { RepositoryRegistry, TOKEN_BATCH_INSERT, TypeormTokenRepository, TypeormUnitOfWork } from '@gatehouse/persistence';
import { DataSource } from 'typeorm';
import { DATABASES, newTenant as tenantIn, OpenedBackend, openForSuite } from './persistence-backends';

const NOW = new Date('2026-11-26T10:00:00.000Z');

function aToken(tenantId: string, over: Partial<Token> = {}): Token {
  return {
    tenantId,
    id: randomUUID(),
    type: 'card',
    sealed: Buffer.from([1, 0, 255, 92, 120]),
    mask: { number: '{{ data.number | reveal_last: 4 }}' },
    containers: ['/pci/high/', '/general/'],
    metadata: { order: '42' },
    fingerprint: 'fp',
    fingerprintExpression: '{{ data.number }}',
    expiresAt: new Date('2027-01-01T00:00:00.000Z'),
    createdBy: randomUUID(),
    createdAt: NOW,
    modifiedBy: null,
    modifiedAt: null,
    ...over,
  };
}

function created(token: Token): NewAuditEvent {
  return {
    tenantId: token.tenantId,
    actor: { id: token.createdBy, type: 'application' },
    entityType: 'card',
    entityId: token.id,
    operation: 'create',
    message: `Token ${token.id} created`,
  };
}

/** The data source with its statements and transactions counted (a create in a transaction of its own counts one). */
function counting(dataSource: DataSource): { dataSource: DataSource; statements: () => number } {
  let n = 0;
  const proxy = new Proxy(dataSource, {
    get(target, property) {
      if (property === 'query') return (...args: Parameters<DataSource['query']>) => (n++, target.query(...args));
      if (property === 'transaction') return (...args: unknown[]) => (n++, (target.transaction as (...a: unknown[]) => unknown)(...args));
      return Reflect.get(target, property, target) as unknown;
    },
  });
  return { dataSource: proxy, statements: () => n };
}

describe.each(DATABASES)('UnitOfWork.insert (grouped creates) on $name', (backend) => {
  let db: OpenedBackend;
  openForSuite(backend, (opened) => (db = opened));

  function setUp() {
    const publisher = new RecordingAuditEventPublisher();
    const counted = counting(db.dataSource);
    const registry = new RepositoryRegistry()
      .register(TokenRepository, (em) => new TypeormTokenRepository(em))
      .registerBatchInsert(TokenRepository, TOKEN_BATCH_INSERT);
    const uow = new TypeormUnitOfWork(counted.dataSource, registry, publisher, new FixedClock(NOW));
    return { uow, publisher, statements: counted.statements };
  }

  const newTenant = (): Promise<string> => tenantIn(db.tenants, NOW);

  const outbox = (tenantId: string): Promise<{ entity_id: string; operation: string }[]> =>
    db.dataSource.query(`SELECT entity_id, operation FROM audit_outbox WHERE tenant_id = $1 ORDER BY entity_id`, [tenantId]);

  it('stores concurrent creates, each with its own audit row, in fewer statements than creates', async () => {
    const { uow, publisher, statements } = setUp();
    const tenantId = await newTenant();
    const tokens = Array.from({ length: 40 }, (_, i) => aToken(tenantId, { metadata: { i: String(i) }, containers: i % 2 ? ['/a/'] : ['/b/c/', '/d/'] }));
    await Promise.all(tokens.map((token) => uow.insert(TokenRepository, token, [created(token)])));
    expect(statements()).toBeLessThan(tokens.length);
    const repository = new TypeormTokenRepository(db.dataSource.manager);
    for (const token of tokens) expect(await repository.findById(tenantId, token.id)).toEqual(token);
    expect(await outbox(tenantId)).toEqual(
      tokens.map((t) => ({ entity_id: t.id, operation: 'create' })).sort((a, b) => a.entity_id.localeCompare(b.entity_id)),
    );
    expect(publisher.published.map((event) => event.entityId).sort()).toEqual(tokens.map((t) => t.id).sort());
  });

  it('refuses a taken id with a ConflictError and writes nothing for it, while the creates beside it go in', async () => {
    const { uow, publisher } = setUp();
    const tenantId = await newTenant();
    const existing = aToken(tenantId);
    await uow.insert(TokenRepository, existing, [created(existing)]);
    const again = aToken(tenantId, { id: existing.id, metadata: { second: 'yes' } });
    const twins = [aToken(tenantId, { id: 'twin' }), aToken(tenantId, { id: 'twin', metadata: { twin: '2' } })];
    const others = [aToken(tenantId), aToken(tenantId)];
    const results = await Promise.allSettled([again, ...twins, ...others].map((token) => uow.insert(TokenRepository, token, [created(token)])));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    for (const r of [results[0], results[2]]) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(ConflictError);
    const repository = new TypeormTokenRepository(db.dataSource.manager);
    expect((await repository.findById(tenantId, existing.id))?.metadata).toEqual(existing.metadata);
    expect((await repository.findById(tenantId, 'twin'))?.metadata).toEqual(twins[0]?.metadata);
    const rows = await outbox(tenantId);
    expect(rows.filter((row) => row.entity_id === existing.id)).toHaveLength(1);
    expect(rows.filter((row) => row.entity_id === 'twin')).toHaveLength(1);
    expect(rows).toHaveLength(4);
    expect(publisher.published).toHaveLength(4);
  });

  it('keeps tenants apart in one statement: the same id in two tenants is two creates, each logged in its tenant', async () => {
    const { uow, publisher, statements } = setUp();
    const [first, second] = [await newTenant(), await newTenant()];
    const before = statements();
    const mine = aToken(first, { id: 'shared-id', metadata: { owner: 'first' } });
    const theirs = aToken(second, { id: 'shared-id', metadata: { owner: 'second' } });
    const results = await Promise.allSettled([mine, theirs].map((token) => uow.insert(TokenRepository, token, [created(token)])));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(statements() - before).toBe(1);
    const repository = new TypeormTokenRepository(db.dataSource.manager);
    expect((await repository.findById(first, 'shared-id'))?.metadata).toEqual({ owner: 'first' });
    expect((await repository.findById(second, 'shared-id'))?.metadata).toEqual({ owner: 'second' });
    expect(await outbox(first)).toEqual([{ entity_id: 'shared-id', operation: 'create' }]);
    expect(await outbox(second)).toEqual([{ entity_id: 'shared-id', operation: 'create' }]);
    expect(publisher.published.map((event) => event.tenantId).sort()).toEqual([first, second].sort());
    // A taken id in one tenant conflicts there only, in the same statement as a free one elsewhere.
    const again = await Promise.allSettled(
      [aToken(first, { id: 'shared-id' }), aToken(await newTenant(), { id: 'shared-id' })].map((token) => uow.insert(TokenRepository, token, [created(token)])),
    );
    expect(again.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
    expect(await outbox(first)).toHaveLength(1);
  });

  it('fails only the create whose value the database refuses, not the others of its statement', async () => {
    const { uow } = setUp();
    const tenantId = await newTenant();
    // A NUL in a text value: PostgreSQL refuses it (22021), for this row only.
    const bad = aToken(tenantId, { fingerprintExpression: 'a\u0000b' });
    const good = [aToken(tenantId), aToken(tenantId), aToken(tenantId)];
    const results = await Promise.allSettled([good[0], bad, good[1], good[2]].map((token) => uow.insert(TokenRepository, token!, [created(token!)])));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(InvalidDataError);
    expect((await outbox(tenantId)).map((row) => row.entity_id).sort()).toEqual(good.map((t) => t.id).sort());
  });
});
