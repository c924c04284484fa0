import { randomUUID } from 'node:crypto';
import { AccessRule, Application, ApplicationRepository, decodeCursor, generateApiKey, hashApiKey, TenantRepository, ValidationError } from '@gatehouse/domain';
import { InMemoryApplicationRepository, InMemoryTenantRepository } from '@gatehouse/domain/testing';
import { DATABASES, newTenant as tenantIn, openForSuite } from './persistence-backends';

interface Repositories {
  applications: ApplicationRepository;
  tenants: TenantRepository;
  close(): Promise<void>;
}

// The in-memory fake runs the same suite, so unit tests over it mean what they mean against the databases.
const BACKENDS: { name: string; open(): Promise<Repositories> }[] = [
  ...DATABASES,
  {
    name: 'in-memory fake',
    open: async () => ({ applications: new InMemoryApplicationRepository(), tenants: new InMemoryTenantRepository(), close: async () => undefined }),
  },
];

const T0 = Date.parse('2026-11-21T10:00:00.000Z');

const RULES: AccessRule[] = [
  { description: 'cards', priority: 1, container: '/pci/high/', conditions: null, transform: 'mask', permissions: ['token:read'] },
  { description: null, priority: 2, container: '/', conditions: null, transform: 'reveal', permissions: ['token:read', 'token:use'] },
];

function anApplication(tenantId: string, over: Partial<Application> = {}): Application {
  return {
    id: randomUUID(),
    tenantId,
    name: 'backend',
    type: 'private',
    permissions: ['token:read', 'token:search'],
    rules: RULES,
    keyHash: hashApiKey(generateApiKey()),
    createdBy: randomUUID(),
    createdAt: new Date(T0),
    modifiedBy: null,
    modifiedAt: null,
    expiresAt: null,
    canCreateExpiringApplications: true,
    rateLimit: null,
    previousKeyHash: null,
    previousKeyExpiresAt: null,
    lastUsedAt: null,
    ...over,
  };
}

describe.each(BACKENDS)('ApplicationRepository on $name', (backend) => {
  let db: Repositories;
  openForSuite(backend, (opened) => (db = opened));
  const newTenant = (): Promise<string> => tenantIn(db.tenants, new Date(T0));

  /** `n` applications one second apart, oldest first; returns them newest first, as lists order them. */
  async function seed(tenantId: string, n: number, over: (i: number) => Partial<Application> = () => ({})): Promise<Application[]> {
    const apps: Application[] = [];
    for (let i = 0; i < n; i++) {
      const app = anApplication(tenantId, { name: `app-${i}`, createdAt: new Date(T0 + i * 1000), ...over(i) });
      await db.applications.insert(app);
      apps.push(app);
    }
    return apps.reverse();
  }

  describe('insert and find', () => {
    it('round-trips every field', async () => {
      const tenantId = await newTenant();
      const app = anApplication(tenantId, {
        createdAt: new Date('2026-11-21T10:00:00.123Z'),
        modifiedBy: randomUUID(),
        modifiedAt: new Date('2026-11-21T11:00:00.456Z'),
      });
      await db.applications.insert(app);
      expect(await db.applications.findById(tenantId, app.id)).toEqual(app);
      expect(await db.applications.findByKeyHash(app.keyHash)).toEqual(app);
    });

    it('round-trips an expiring application with conditions and the nulls', async () => {
      const tenantId = await newTenant();
      const app = anApplication(tenantId, {
        type: 'expiring',
        permissions: [],
        rules: [
          {
            description: 'x',
            priority: 3,
            container: null,
            conditions: [{ attribute: 'container', operator: 'starts_with', value: '/pci/' }],
            transform: 'redact',
            permissions: ['token:read'],
          },
        ],
        createdBy: null,
        expiresAt: new Date('2026-11-21T10:01:00.000Z'),
        canCreateExpiringApplications: null,
      });
      await db.applications.insert(app);
      expect(await db.applications.findById(tenantId, app.id)).toEqual(app);
    });

    it('round-trips unicode names, emoji included', async () => {
      const tenantId = await newTenant();
      const app = anApplication(tenantId, { name: 'ключ 🔑 鍵 \u00e9\u0301' });
      await db.applications.insert(app);
      expect((await db.applications.findById(tenantId, app.id))?.name).toBe(app.name);
    });

    it("finds nothing for another tenant's id or an unknown id or key hash", async () => {
      const tenantId = await newTenant();
      const other = await newTenant();
      const app = anApplication(tenantId);
      await db.applications.insert(app);
      expect(await db.applications.findById(other, app.id)).toBeNull();
      expect(await db.applications.findById(tenantId, randomUUID())).toBeNull();
      expect(await db.applications.findByKeyHash(hashApiKey(generateApiKey()))).toBeNull();
    });
  });

  describe('update', () => {
    it('replaces the mutable fields and reports success', async () => {
      const tenantId = await newTenant();
      const app = anApplication(tenantId);
      await db.applications.insert(app);
      const changed: Application = {
        ...app,
        name: 'renamed',
        permissions: ['token:use'],
        rules: [],
        keyHash: hashApiKey(generateApiKey()),
        modifiedBy: randomUUID(),
        modifiedAt: new Date(T0 + 5000),
        canCreateExpiringApplications: null,
      };
      expect(await db.applications.update(changed)).toBe(true);
      expect(await db.applications.findById(tenantId, app.id)).toEqual(changed);
      expect(await db.applications.findByKeyHash(app.keyHash)).toBeNull();
      expect((await db.applications.findByKeyHash(changed.keyHash))?.id).toBe(app.id);
    });

    it("is false, changing nothing, for another tenant's application or a missing one", async () => {
      const tenantId = await newTenant();
      const other = await newTenant();
      const app = anApplication(tenantId);
      await db.applications.insert(app);
      expect(await db.applications.update({ ...app, tenantId: other, name: 'stolen' })).toBe(false);
      expect(await db.applications.update(anApplication(tenantId))).toBe(false);
      expect(await db.applications.findById(tenantId, app.id)).toEqual(app);
    });
  });

  describe('delete', () => {
    it('removes the row once', async () => {
      const tenantId = await newTenant();
      const app = anApplication(tenantId);
      await db.applications.insert(app);
      expect(await db.applications.delete(tenantId, app.id)).toBe(true);
      expect(await db.applications.findById(tenantId, app.id)).toBeNull();
      expect(await db.applications.findByKeyHash(app.keyHash)).toBeNull();
      expect(await db.applications.delete(tenantId, app.id)).toBe(false);
    });

    it("is false for another tenant's application, which stays", async () => {
      const tenantId = await newTenant();
      const other = await newTenant();
      const app = anApplication(tenantId);
      await db.applications.insert(app);
      expect(await db.applications.delete(other, app.id)).toBe(false);
      expect(await db.applications.findById(tenantId, app.id)).toEqual(app);
    });
  });

  describe('findExpired', () => {
    it('returns what expired at or before now, across tenants, oldest first, up to the limit', async () => {
      // Far in the past, so rows other suites left in the shared database cannot be due by then.
      const at = (s: number) => new Date(Date.parse('1991-03-04T05:06:07.000Z') + s * 1000);
      const a = await newTenant();
      const b = await newTenant();
      const late = anApplication(a, { type: 'expiring', expiresAt: at(30) });
      const second = anApplication(b, { type: 'expiring', expiresAt: at(20) });
      const first = anApplication(a, { type: 'expiring', expiresAt: at(10) });
      const exactlyNow = anApplication(b, { type: 'expiring', expiresAt: at(25) });
      const never = anApplication(a, { expiresAt: null });
      for (const app of [late, second, first, exactlyNow, never]) await db.applications.insert(app);

      expect((await db.applications.findExpired(at(25), 100)).map((x) => x.id)).toEqual([first.id, second.id, exactlyNow.id]);
      expect((await db.applications.findExpired(at(25), 2)).map((x) => x.id)).toEqual([first.id, second.id]);
      expect(await db.applications.findExpired(at(9), 100)).toEqual([]);
      const due = await db.applications.findExpired(at(30), 100);
      expect(due.find((x) => x.id === late.id)).toEqual(late);
    });
  });

  describe('list', () => {
    it('is scoped to the tenant, newest first, with offset paging and totals', async () => {
      const tenantId = await newTenant();
      const other = await newTenant();
      const apps = await seed(tenantId, 5);
      await seed(other, 3);
      const page1 = await db.applications.list(tenantId, {}, { page: 1, size: 2 });
      expect(page1.items).toEqual(apps.slice(0, 2));
      expect(page1).toMatchObject({ page: 1, size: 2, totalItems: 5 });
      expect(page1.next).toBeDefined();
      const page3 = await db.applications.list(tenantId, {}, { page: 3, size: 2 });
      expect(page3.items).toEqual(apps.slice(4));
      expect(page3.totalItems).toBe(5);
      expect(page3.next).toBeUndefined();
      const beyond = await db.applications.list(tenantId, {}, { page: 4, size: 2 });
      expect(beyond.items).toEqual([]);
      expect(beyond.totalItems).toBe(5);
      expect(beyond.next).toBeUndefined();
      for (const far of [1e6, 1e20, 1e308]) {
        expect(await db.applications.list(tenantId, {}, { page: far, size: 100 })).toMatchObject({ items: [], totalItems: 5, next: undefined });
      }
      const all = await db.applications.list(tenantId, {}, { page: 1, size: 100 });
      expect(all.items.map((a) => a.id)).toEqual(apps.map((a) => a.id));
      expect(all.next).toBeUndefined();
    });

    it('has no next when the last page is exactly full', async () => {
      const tenantId = await newTenant();
      await seed(tenantId, 4);
      const page2 = await db.applications.list(tenantId, {}, { page: 2, size: 2 });
      expect(page2.items).toHaveLength(2);
      expect(page2.next).toBeUndefined();
    });

    it('filters by ids and types, alone and together, and totals the filtered set', async () => {
      const tenantId = await newTenant();
      const other = await newTenant();
      const apps = await seed(tenantId, 6, (i) => ({ type: i % 2 === 0 ? 'private' : 'public' }));
      const [foreign] = await seed(other, 1);
      const ids = [apps[0]!.id, apps[1]!.id, apps[2]!.id, foreign!.id];

      const byIds = await db.applications.list(tenantId, { ids }, { page: 1, size: 20 });
      expect(byIds.items.map((a) => a.id)).toEqual(ids.slice(0, 3));
      expect(byIds.totalItems).toBe(3);

      const byType = await db.applications.list(tenantId, { types: ['public'] }, { page: 1, size: 20 });
      expect(byType.items.map((a) => a.id)).toEqual(apps.filter((a) => a.type === 'public').map((a) => a.id));

      const both = await db.applications.list(tenantId, { ids, types: ['private', 'management'] }, { page: 1, size: 20 });
      expect(both.items.map((a) => a.id)).toEqual(
        apps
          .slice(0, 3)
          .filter((a) => a.type === 'private')
          .map((a) => a.id),
      );

      expect((await db.applications.list(tenantId, { ids: [foreign!.id] }, { page: 1, size: 20 })).items).toEqual([]);
      expect((await db.applications.list(tenantId, { ids: [], types: [] }, { page: 1, size: 20 })).totalItems).toBe(6);
    });

    it('walks every row exactly once with the cursor, ties in created_at included', async () => {
      const tenantId = await newTenant();
      await seed(await newTenant(), 4);
      // Three share one millisecond: the id must break the tie, or a page boundary would skip or repeat rows.
      const apps = await seed(tenantId, 11, (i) => ({ createdAt: new Date(T0 + (i >= 4 && i <= 6 ? 4000 : i * 1000)) }));
      const expected = [...apps].sort((x, y) => y.createdAt.getTime() - x.createdAt.getTime() || (x.id < y.id ? 1 : -1)).map((a) => a.id);

      for (const size of [1, 2, 3, 4, 11, 12]) {
        const seen: string[] = [];
        let page = await db.applications.list(tenantId, {}, { page: 1, size });
        seen.push(...page.items.map((a) => a.id));
        let guard = 0;
        while (page.next && guard++ < 20) {
          expect(page.items).toHaveLength(size);
          page = await db.applications.list(tenantId, {}, { page: 1, size, start: page.next });
          expect(page.totalItems).toBeUndefined();
          expect(page.page).toBeUndefined();
          seen.push(...page.items.map((a) => a.id));
        }
        expect(page.next).toBeUndefined();
        expect(seen).toEqual(expected);
      }
    });

    it('keeps the filters while following the cursor', async () => {
      const tenantId = await newTenant();
      const apps = await seed(tenantId, 6, (i) => ({ type: i % 2 === 0 ? 'private' : 'public' }));
      const first = await db.applications.list(tenantId, { types: ['public'] }, { page: 1, size: 2 });
      const rest = await db.applications.list(tenantId, { types: ['public'] }, { page: 1, size: 2, start: first.next });
      expect([...first.items, ...rest.items].map((a) => a.id)).toEqual(apps.filter((a) => a.type === 'public').map((a) => a.id));
      expect(rest.next).toBeUndefined();
    });

    it('makes the next cursor point at the last row of the page', async () => {
      const tenantId = await newTenant();
      const apps = await seed(tenantId, 3);
      const page = await db.applications.list(tenantId, {}, { page: 1, size: 2 });
      expect(decodeCursor(page.next!)).toEqual({ id: apps[1]!.id, createdAt: apps[1]!.createdAt });
    });

    it('refuses a cursor that is not one with a ValidationError on start', async () => {
      const tenantId = await newTenant();
      await expect(db.applications.list(tenantId, {}, { page: 1, size: 2, start: 'bogus' })).rejects.toBeInstanceOf(ValidationError);
    });
  });
});
