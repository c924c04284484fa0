import { randomUUID } from 'node:crypto';
import { generateProxyKey, ProxyRepository, TenantRepository } from '@gatehouse/domain';
import { InMemoryProxyRepository, InMemoryTenantRepository } from '@gatehouse/domain/testing';
import { DataSource } from 'typeorm';
import { CachedProxyRepository, DatabaseVaultCrypto, InMemoryVersionStore, TypeormProxyRepository, VaultKeyStore } from '@gatehouse/persistence';
import { testKeyWrapper } from '@gatehouse/test-support/test-vault';
import { aProxyRecord, PROXY_RECORD_T0 } from '@gatehouse/test-support/proxy-record';
import { DATABASES, newTenant as tenantIn, OpenedBackend, openForSuite, POSTGRES } from './persistence-backends';

interface Repositories {
  proxies: ProxyRepository;
  tenants: TenantRepository;
  /** The raw rows, where the backend has them. */
  dataSource?: DataSource;
  close(): Promise<void>;
}

function sealedProxies(dataSource: DataSource): TypeormProxyRepository {
  return new TypeormProxyRepository(dataSource.manager, new DatabaseVaultCrypto(new VaultKeyStore(dataSource, testKeyWrapper())));
}

// The in-memory fake of the unit tests runs the same suite, so it means what the adapter means.
const BACKENDS: { name: string; open(): Promise<Repositories> }[] = [
  ...DATABASES.map((backend) => ({
    name: backend.name,
    open: async (): Promise<Repositories> => {
      const opened = await backend.open();
      return { proxies: sealedProxies(opened.dataSource), tenants: opened.tenants, dataSource: opened.dataSource, close: () => opened.close() };
    },
  })),
  {
    name: 'in-memory fake',
    open: async () => ({ proxies: new InMemoryProxyRepository(), tenants: new InMemoryTenantRepository(), close: async () => undefined }),
  },
];

// Opening PGlite and migrating it takes a few seconds.
jest.setTimeout(60_000);

const T0 = PROXY_RECORD_T0;
const aProxy = aProxyRecord;

describe.each(BACKENDS)('ProxyRepository on $name', (backend) => {
  let db: Repositories;
  openForSuite(backend, (opened) => (db = opened));
  const newTenant = (): Promise<string> => tenantIn(db.tenants, new Date(T0));

  it('round-trips every field, transforms and configuration included', async () => {
    const tenantId = await newTenant();
    const full = aProxy(tenantId, {
      requestTransform: { code: 'module.exports = async (req) => req.args; // ünïcödé ✓' },
      responseTransform: { code: 'module.exports = async (req) => ({ body: null, headers: {} });' },
      configuration: JSON.parse('{"__proto__": "data", "EMPTY": "", "Ü": "✓"}'),
      applicationId: randomUUID(),
      requireAuth: false,
      modifiedBy: randomUUID(),
    });
    const bare = aProxy(tenantId);
    await db.proxies.insert(full);
    await db.proxies.insert(bare);
    expect(await db.proxies.findById(tenantId, full.id)).toEqual(full);
    expect(await db.proxies.findById(tenantId, bare.id)).toEqual(bare);
    const found = await db.proxies.findByKey(full.key);
    expect(found).toEqual(full);
    expect(Object.entries(found!.configuration!)).toContainEqual(['__proto__', 'data']);
  });

  it("scopes id lookups, updates and deletes to the tenant; the key alone finds any tenant's proxy", async () => {
    const tenantId = await newTenant();
    const other = await newTenant();
    const proxy = aProxy(tenantId);
    await db.proxies.insert(proxy);
    expect(await db.proxies.findById(other, proxy.id)).toBeNull();
    expect(await db.proxies.update({ ...proxy, tenantId: other, name: 'hijacked' })).toBe(false);
    expect(await db.proxies.delete(other, proxy.id)).toBe(false);
    expect((await db.proxies.findByKey(proxy.key))?.name).toBe('payments');
    expect(await db.proxies.findByKey(generateProxyKey())).toBeNull();

    const updated = { ...proxy, name: 'renamed', configuration: { A: 'b' }, modifiedAt: new Date(T0 + 1000) };
    expect(await db.proxies.update(updated)).toBe(true);
    expect(await db.proxies.findById(tenantId, proxy.id)).toEqual(updated);
    expect(await db.proxies.delete(tenantId, proxy.id)).toBe(true);
    expect(await db.proxies.findById(tenantId, proxy.id)).toBeNull();
    expect(await db.proxies.findByKey(proxy.key)).toBeNull();
    expect(await db.proxies.delete(tenantId, proxy.id)).toBe(false);
  });

  it('stores neither the key nor a configuration value in plaintext; a sealed value moved to another row does not open', async () => {
    if (!db.dataSource) return;
    const tenantId = await newTenant();
    const proxy = aProxy(tenantId, { configuration: { STRIPE_KEY: 'sk_live_plaintext_scan_0001' } });
    const other = aProxy(tenantId);
    await db.proxies.insert(proxy);
    await db.proxies.insert(other);
    const [row] = await db.dataSource.query(
      `SELECT to_jsonb(p)::text AS text, encode(key_sealed, 'escape') || encode(configuration_sealed, 'escape') AS bytes FROM proxies p WHERE id = $1`,
      [proxy.id],
    );
    for (const text of [row.text, row.bytes]) {
      expect(text).not.toContain(proxy.key);
      expect(text).not.toContain('sk_live_plaintext_scan_0001');
    }
    await db.dataSource.query(`UPDATE proxies SET configuration_sealed = (SELECT configuration_sealed FROM proxies WHERE id = $1) WHERE id = $2`, [
      proxy.id,
      other.id,
    ]);
    await expect(db.proxies.findById(tenantId, other.id)).rejects.toThrow('does not open');
    // A row no key opens would stop the migration tests' down() of this shared database.
    await db.dataSource.query('DELETE FROM proxies WHERE id = $1', [other.id]);
  });

  it("sums a tenant's configurations (bytes, at least their compact JSON), leaving one proxy out on request", async () => {
    const tenantId = await newTenant();
    const other = await newTenant();
    const a = aProxy(tenantId, { configuration: { token: 'x'.repeat(1000), é: 'ü' } });
    const b = aProxy(tenantId, { configuration: { k: 'v' } });
    await db.proxies.insert(a);
    await db.proxies.insert(b);
    await db.proxies.insert(aProxy(tenantId));
    await db.proxies.insert(aProxy(other, { configuration: { big: 'y'.repeat(5000) } }));
    const compact = (c: object) => Buffer.byteLength(JSON.stringify(c));
    const all = await db.proxies.configurationBytes(tenantId);
    expect(all).toBeGreaterThanOrEqual(compact(a.configuration!) + compact(b.configuration!));
    // Stored sealed: each with an envelope of a few dozen bytes.
    expect(all).toBeLessThanOrEqual(compact(a.configuration!) + compact(b.configuration!) + 2 * 256);
    const withoutA = await db.proxies.configurationBytes(tenantId, a.id);
    expect(withoutA).toBeGreaterThanOrEqual(compact(b.configuration!));
    expect(withoutA).toBeLessThan(compact(b.configuration!) + 256);
    expect(await db.proxies.configurationBytes(randomUUID())).toBe(0);
  });

  it('refuses a second proxy with the same key, across tenants', async () => {
    const first = aProxy(await newTenant());
    await db.proxies.insert(first);
    await expect(db.proxies.insert(aProxy(await newTenant(), { key: first.key }))).rejects.toThrow();
  });

  it('lists newest first, by offset or after a cursor', async () => {
    const tenantId = await newTenant();
    const proxies = Array.from({ length: 5 }, (_, i) => aProxy(tenantId, { name: `p${i}`, createdAt: new Date(T0 + (i % 3) * 1000) }));
    for (const p of proxies) await db.proxies.insert(p);
    const expected = [...proxies].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)).map((p) => p.id);

    const first = await db.proxies.list(tenantId, {}, { page: 1, size: 2 });
    expect(first).toMatchObject({ totalItems: 5, page: 1, size: 2, next: expect.any(String) });
    expect(first.items.map((p) => p.id)).toEqual(expected.slice(0, 2));
    expect((await db.proxies.list(tenantId, {}, { page: 3, size: 2 })).items.map((p) => p.id)).toEqual(expected.slice(4));

    const seen: string[] = [];
    let start: string | undefined;
    do {
      const page = await db.proxies.list(tenantId, {}, { page: 1, size: 2, start });
      if (start) expect(page.totalItems).toBeUndefined();
      seen.push(...page.items.map((p) => p.id));
      start = page.next;
    } while (start);
    expect(seen).toEqual(expected);
  });

  it('filters by ids and by name: case-insensitive substring, * the only wildcard', async () => {
    const tenantId = await newTenant();
    const names = ['Stripe Payments', 'stripe refunds', '100% off', '1000 off', 'a_b', 'aXb', 'back\\slash', 'star*'];
    const ids: Record<string, string> = {};
    for (const name of names) {
      const p = aProxy(tenantId, { name });
      ids[name] = p.id;
      await db.proxies.insert(p);
    }
    const other = await newTenant();
    await db.proxies.insert(aProxy(other, { name: 'Stripe elsewhere' }));
    const names$ = async (name?: string, idList?: string[]) =>
      (await db.proxies.list(tenantId, { name, ids: idList }, { page: 1, size: 100 })).items.map((p) => p.name).sort();

    expect(await names$('stripe')).toEqual(['Stripe Payments', 'stripe refunds']);
    expect(await names$('PAY')).toEqual(['Stripe Payments']);
    expect(await names$('st*s')).toEqual(['Stripe Payments', 'stripe refunds']);
    expect(await names$('100%')).toEqual(['100% off']);
    expect(await names$('%')).toEqual(['100% off']);
    expect(await names$('a_b')).toEqual(['a_b']);
    expect(await names$('_')).toEqual(['a_b']);
    expect(await names$('k\\s')).toEqual(['back\\slash']);
    expect(await names$('*')).toEqual([...names].sort());
    expect(await names$('')).toEqual([...names].sort());
    expect(await names$('st*r*s')).toEqual(['Stripe Payments', 'stripe refunds']);
    expect(await names$(undefined, [ids['a_b']!, ids['aXb']!, randomUUID()])).toEqual(['a_b', 'aXb'].sort());
    expect(await names$('x', [ids['a_b']!, ids['aXb']!])).toEqual(['aXb']);
  });
});

describe('CachedProxyRepository over PostgreSQL', () => {
  let opened: OpenedBackend;
  openForSuite(POSTGRES, (backend) => (opened = backend));

  it('serves a key from memory only while the proxy version is unchanged', async () => {
    const inner = sealedProxies(opened.dataSource);
    const versions = new InMemoryVersionStore();
    const cached = new CachedProxyRepository(inner, versions);
    const tenantId = await tenantIn(opened.tenants, new Date(T0));
    const proxy = aProxy(tenantId, { configuration: { A: 'b' } });
    await inner.insert(proxy);

    expect(await cached.findByKey(proxy.key)).toEqual(proxy);
    await inner.update({ ...proxy, destinationUrl: 'https://moved.example.com' });
    // Nothing was committed through a unit of work, so nothing bumped the version: the entry stands...
    expect((await cached.findByKey(proxy.key))?.destinationUrl).toBe(proxy.destinationUrl);
    // ...until a committed change to any proxy bumps it (VersionBumpingCommitObserver does, before the writer answers).
    await versions.bump('proxy');
    expect((await cached.findByKey(proxy.key))?.destinationUrl).toBe('https://moved.example.com');
    await inner.delete(tenantId, proxy.id);
    await versions.bump('proxy');
    expect(await cached.findByKey(proxy.key)).toBeNull();
  });

  it('hands out entries nobody can change for the next caller', async () => {
    const inner = sealedProxies(opened.dataSource);
    const cached = new CachedProxyRepository(inner, new InMemoryVersionStore());
    const tenantId = await tenantIn(opened.tenants, new Date(T0));
    const proxy = aProxy(tenantId, { configuration: { A: 'b' } });
    await inner.insert(proxy);
    const first = (await cached.findByKey(proxy.key))!;
    expect(() => ((first as { name: string }).name = 'changed')).toThrow();
    expect(() => ((first.configuration as Record<string, string>).A = 'changed')).toThrow();
    expect(await cached.findByKey(proxy.key)).toEqual(proxy);
  });

  it('goes to the database every time while versions cannot be read', async () => {
    const inner = sealedProxies(opened.dataSource);
    const unreachable = new (class extends InMemoryVersionStore {
      override async read(): Promise<string> {
        return null as unknown as string;
      }
    })();
    const cached = new CachedProxyRepository(inner, unreachable);
    const tenantId = await tenantIn(opened.tenants, new Date(T0));
    const proxy = aProxy(tenantId);
    await inner.insert(proxy);
    expect(await cached.findByKey(proxy.key)).toEqual(proxy);
    await inner.update({ ...proxy, name: 'renamed' });
    expect((await cached.findByKey(proxy.key))?.name).toBe('renamed');
  });
});
