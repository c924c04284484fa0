import { randomUUID } from 'node:crypto';
import { aSystemEvent, InMemoryTenantRepository, InMemoryTokenRepository } from '@gatehouse/domain/testing';
import { AuditEvent, ConflictError, TenantRepository, Token, TokenRepository, TokenVisibility } from '@gatehouse/domain';
import {
  CachedTokenRepository,
  containerPrefixes,
  InMemoryVersionStore,
  MAX_CACHED_SEALED_BYTES,
  TypeormTokenRepository,
  VersionBumpingCommitObserver,
} from '@gatehouse/persistence';
import { DataSource } from 'typeorm';
import { DATABASES, newTenant as tenantIn, OpenedBackend, openForSuite, POSTGRES } from './persistence-backends';

interface Repositories {
  tokens: TokenRepository;
  tenants: TenantRepository;
  dataSource?: DataSource;
  close(): Promise<void>;
}

// The in-memory fake of the unit tests runs the same suite, so it means what the adapter means.
const BACKENDS: { name: string; open(): Promise<Repositories> }[] = [
  ...DATABASES.map((backend) => ({
    name: backend.name,
    open: async (): Promise<Repositories> => {
      const opened = await backend.open();
      return {
        tokens: new TypeormTokenRepository(opened.dataSource.manager),
        tenants: opened.tenants,
        dataSource: opened.dataSource,
        close: () => opened.close(),
      };
    },
  })),
  {
    name: 'in-memory fake',
    open: async () => ({ tokens: new InMemoryTokenRepository(), tenants: new InMemoryTenantRepository(), close: async () => undefined }),
  },
];

jest.setTimeout(60_000);

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const EVERYTHING: TokenVisibility = [{ container: '/' }];

function aToken(tenantId: string, over: Partial<Token> = {}): Token {
  return {
    tenantId,
    id: randomUUID(),
    type: 'token',
    sealed: Buffer.from([1, 2, 3, 0, 255]),
    mask: null,
    containers: ['/general/high/'],
    metadata: {},
    fingerprint: null,
    fingerprintExpression: null,
    expiresAt: null,
    createdBy: randomUUID(),
    createdAt: new Date(T0),
    modifiedBy: null,
    modifiedAt: null,
    ...over,
  };
}

describe('containerPrefixes', () => {
  it('lists every segment prefix of every container once', () => {
    expect(containerPrefixes(['/pci/high/', '/pci/low/'])).toEqual(['/', '/pci/', '/pci/high/', '/pci/low/']);
  });
});

describe.each(BACKENDS)('TokenRepository on $name', (backend) => {
  let db: Repositories;
  openForSuite(backend, (opened) => (db = opened));
  const newTenant = (): Promise<string> => tenantIn(db.tenants, new Date(T0));

  it('round-trips every field; ids are per tenant (a second insert of one is a ConflictError)', async () => {
    const tenantId = await newTenant();
    const full = aToken(tenantId, {
      id: `tok_${'x'.repeat(390)}`,
      type: 'card',
      mask: { number: '{{ data.number | reveal: 6, 4 }}' },
      containers: ['/pci/high/', '/shared/'],
      metadata: { __proto__: 'data', 'ü ✓': 'v' } as Record<string, string>,
      fingerprint: 'fp',
      fingerprintExpression: '{{ data.number }}',
      expiresAt: new Date(T0 + 60_000),
      modifiedBy: randomUUID(),
      modifiedAt: new Date(T0 + 1),
    });
    await db.tokens.insert(full);
    expect(await db.tokens.findById(tenantId, full.id)).toEqual(full);
    await expect(db.tokens.insert(aToken(tenantId, { id: full.id }))).rejects.toBeInstanceOf(ConflictError);
    const otherTenant = await newTenant();
    await db.tokens.insert(aToken(otherTenant, { id: full.id }));
    expect(await db.tokens.findById(otherTenant, full.id)).not.toEqual(full);
    expect((await db.tokens.findByIds(tenantId, [full.id, 'missing'])).map((t) => t.id)).toEqual([full.id]);
    // A mask that is one template (a JSON string), and none.
    const masked = aToken(tenantId, { mask: '{{ data | slice: 0, 2 }}"\\' });
    const plain = aToken(tenantId, { mask: null, containers: [] });
    for (const token of [masked, plain]) await db.tokens.insert(token);
    expect(await db.tokens.findByIds(tenantId, [masked.id, plain.id])).toEqual([masked, plain]);
  });

  it("answers concurrent reads by id each with its own tenant's tokens (batched into one statement outside a transaction)", async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    for (const id of [a, b]) await db.tenants.insert({ id, name: `acme-${id}`, createdAt: new Date(T0) });
    const shared = randomUUID();
    const [ofA, ofB, onlyA] = [aToken(a, { id: shared, containers: ['/a/'] }), aToken(b, { id: shared, containers: ['/b/'] }), aToken(a)];
    for (const token of [ofA, ofB, onlyA]) await db.tokens.insert(token);
    const [readA, readB, bAsksForA, both, nul, missing] = await Promise.all([
      db.tokens.findById(a, shared),
      db.tokens.findById(b, shared),
      db.tokens.findById(b, onlyA.id),
      db.tokens.findByIds(a, [onlyA.id, shared, onlyA.id]),
      db.tokens.findByIds(a, ['with\u0000nul', onlyA.id]),
      db.tokens.findById(a, 'missing'),
    ]);
    expect(readA?.containers).toEqual(['/a/']);
    expect(readB?.containers).toEqual(['/b/']);
    expect(bAsksForA).toBeNull();
    expect(both.map((t) => t.id).sort()).toEqual([onlyA.id, shared].sort());
    expect(both.find((t) => t.id === shared)?.tenantId).toBe(a);
    expect(nul.map((t) => t.id)).toEqual([onlyA.id]);
    expect(missing).toBeNull();
  });

  it('updates and deletes within the tenant only', async () => {
    const tenantId = await newTenant();
    const token = aToken(tenantId, { id: 'u1' });
    await db.tokens.insert(token);
    expect(await db.tokens.update({ ...token, tenantId: await newTenant() })).toBe(false);
    expect(await db.tokens.update({ ...token, metadata: { a: 'b' }, containers: ['/x/'] })).toBe(true);
    expect(await db.tokens.findById(tenantId, 'u1')).toMatchObject({ metadata: { a: 'b' }, containers: ['/x/'] });
    expect(await db.tokens.delete(tenantId, 'u1')).toBe(true);
    expect(await db.tokens.delete(tenantId, 'u1')).toBe(false);
  });

  it('finds the oldest unexpired token of a type by fingerprint', async () => {
    const tenantId = await newTenant();
    await db.tokens.insert(aToken(tenantId, { id: 'old', type: 'card', fingerprint: 'f', createdAt: new Date(T0) }));
    await db.tokens.insert(aToken(tenantId, { id: 'new', type: 'card', fingerprint: 'f', createdAt: new Date(T0 + 5) }));
    await db.tokens.insert(aToken(tenantId, { id: 'other-type', type: 'card_number', fingerprint: 'f', createdAt: new Date(T0 - 5) }));
    expect((await db.tokens.findByFingerprint(tenantId, 'card', 'f', new Date(T0)))?.id).toBe('old');
    await db.tokens.lockFingerprint(tenantId, 'card', 'f');
    expect(await db.tokens.findByFingerprint(tenantId, 'bank', 'f', new Date(T0))).toBeNull();
  });

  it('lists newest first, keyset paged, filtered, within the visibility scopes, without expired tokens', async () => {
    const tenantId = await newTenant();
    const at = (i: number) => new Date(T0 + i * 1000);
    await db.tokens.insert(aToken(tenantId, { id: 'a', containers: ['/pci/high/'], metadata: { k: '1', j: 'x' }, createdAt: at(1) }));
    await db.tokens.insert(aToken(tenantId, { id: 'b', type: 'card', containers: ['/pci/low/'], metadata: { k: '1' }, fingerprint: 'fb', createdAt: at(2) }));
    await db.tokens.insert(aToken(tenantId, { id: 'c', containers: ['/bank/high/', '/pci_x/'], createdAt: at(3) }));
    await db.tokens.insert(aToken(tenantId, { id: 'd', containers: ['/pci/high/'], expiresAt: at(4), createdAt: at(3) }));
    const now = at(4);
    const ids = async (filter: object, visibility: TokenVisibility = EVERYTHING, size = 10) =>
      (await db.tokens.list(tenantId, filter, visibility, { size }, now)).items.map((t) => t.id);
    expect(await ids({})).toEqual(['c', 'b', 'a']);
    const first = await db.tokens.list(tenantId, {}, EVERYTHING, { size: 2 }, now);
    expect(first.items.map((t) => t.id)).toEqual(['c', 'b']);
    expect((await db.tokens.list(tenantId, {}, EVERYTHING, { size: 2, start: first.next }, now)).items.map((t) => t.id)).toEqual(['a']);
    expect(await ids({ container: '/pci/' })).toEqual(['b', 'a']);
    expect(await ids({ container: '/pci' })).toEqual(['c', 'b', 'a']);
    expect(await ids({ container: '/pci/h' })).toEqual(['a']);
    expect(await ids({ types: ['card'] })).toEqual(['b']);
    expect(await ids({ fingerprint: 'fb' })).toEqual(['b']);
    expect(await ids({ metadata: { k: '1' } })).toEqual(['b', 'a']);
    expect(await ids({ metadata: { k: '1', j: 'x' } })).toEqual(['a']);
    expect(await ids({}, [{ container: '/pci/' }])).toEqual(['b', 'a']);
    expect(await ids({}, [{ container: '/bank/' }, { container: '/pci/low/' }])).toEqual(['c', 'b']);
    expect(await ids({}, [])).toEqual([]);
    expect(await ids({}, [{ conditions: [{ attribute: 'id', operator: 'equals', value: 'a' }] }])).toEqual(['a']);
    expect(await ids({}, [{ conditions: [{ attribute: 'container', operator: 'starts_with', value: '/pci_' }] }])).toEqual(['c']);
    expect(
      await ids({}, [
        { conditions: [{ attribute: 'id', operator: 'starts_with', value: '%' }] },
        { conditions: [{ attribute: 'container', operator: 'equals', value: '/pci/low/' }] },
      ]),
    ).toEqual(['b']);
  });

  it('deletes expired tokens of any tenant in bounded batches, returning them', async () => {
    const tenantId = await newTenant();
    const now = new Date(T0 + 10_000);
    for (let i = 0; i < 3; i++) await db.tokens.insert(aToken(tenantId, { id: `e${i}`, type: 'bank', expiresAt: new Date(T0 + i) }));
    await db.tokens.insert(aToken(tenantId, { id: 'live', expiresAt: new Date(T0 + 20_000) }));
    const first = await db.tokens.deleteExpired(now, 2);
    expect(first).toHaveLength(2);
    expect(first[0]).toEqual({ tenantId, id: expect.stringMatching(/^e/), type: 'bank' });
    const rest = (await db.tokens.deleteExpired(now, 100)).filter((t) => t.tenantId === tenantId);
    expect(rest.map((t) => t.id)).toHaveLength(1);
    expect(await db.tokens.findById(tenantId, 'live')).not.toBeNull();
  });
});

describe('CachedTokenRepository over PostgreSQL', () => {
  let opened: OpenedBackend;
  openForSuite(POSTGRES, (backend) => (opened = backend));

  const tenant = (): Promise<string> => tenantIn(opened.tenants, new Date(T0));

  it('serves a token from memory only while no token was updated or deleted, and never an unknown id', async () => {
    const inner = new TypeormTokenRepository(opened.dataSource.manager);
    const versions = new InMemoryVersionStore();
    const cached = new CachedTokenRepository(inner, versions);
    const observer = new VersionBumpingCommitObserver(versions);
    const tenantId = await tenant();
    const token = aToken(tenantId, { containers: ['/a/'] });
    expect(await cached.findById(tenantId, token.id)).toBeNull();
    await inner.insert(token);
    // Not cached while unknown: a create needs no bump to be read.
    expect((await cached.findById(tenantId, token.id))?.containers).toEqual(['/a/']);
    await inner.update({ ...token, containers: ['/moved/'] });
    expect((await cached.findById(tenantId, token.id))?.containers).toEqual(['/a/']);
    // A read or a create of any token commits without moving the version...
    await observer.committed([tokenEvent(tenantId, token.id, 'read'), tokenEvent(tenantId, randomUUID(), 'create')]);
    expect((await cached.findByIds(tenantId, [token.id]))[0]?.containers).toEqual(['/a/']);
    // ...an update or a delete of any token does, before its writer answers.
    await observer.committed([tokenEvent(tenantId, randomUUID(), 'update', 'card')]);
    expect(await cached.findByIds(tenantId, [token.id, token.id])).toEqual([expect.objectContaining({ containers: ['/moved/'] })]);
    await inner.delete(tenantId, token.id);
    await observer.committed([tokenEvent(tenantId, token.id, 'delete')]);
    expect(await cached.findById(tenantId, token.id)).toBeNull();
    expect(cached.keyCacheCounts).toEqual({ hits: 2, misses: 4 });
  });

  it('keeps tokens of each tenant apart, frozen, and large sealed values not at all', async () => {
    const inner = new TypeormTokenRepository(opened.dataSource.manager);
    const cached = new CachedTokenRepository(inner, new InMemoryVersionStore());
    const [a, b] = [await tenant(), await tenant()];
    const id = randomUUID();
    await inner.insert(aToken(a, { id, containers: ['/a/'] }));
    await inner.insert(aToken(b, { id, containers: ['/b/'], sealed: Buffer.alloc(MAX_CACHED_SEALED_BYTES + 1, 7) }));
    for (let i = 0; i < 2; i++) {
      expect((await cached.findById(a, id))?.containers).toEqual(['/a/']);
      expect((await cached.findById(b, id))?.sealed.length).toBe(MAX_CACHED_SEALED_BYTES + 1);
    }
    // a's second read was a hit; b's large token went to the database both times.
    expect(cached.keyCacheCounts).toEqual({ hits: 1, misses: 3 });
    const first = (await cached.findById(a, id))!;
    expect(() => (first.containers as string[]).push('/x/')).toThrow();
    expect(() => ((first as { id: string }).id = 'changed')).toThrow();
  });
});

function tokenEvent(tenantId: string, entityId: string, operation: AuditEvent['operation'], entityType = 'token'): AuditEvent {
  return aSystemEvent(tenantId, { entityType, entityId, operation, message: operation, createdAt: new Date(T0) });
}
