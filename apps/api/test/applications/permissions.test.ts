import { APPLICATION_TYPES, PERMISSIONS } from '@gatehouse/domain';
import type { TestApp } from '@gatehouse/test-support/test-app';
import {
  ANY_UUID,
  appWithTenant,
  as,
  Caller,
  CONDITION_RULE,
  createApplication,
  expectProblem,
  managementWith,
  newTenant,
  rowCounts,
  VALID,
} from '../support/application-fixtures';

describe('permissions', () => {
  let t: TestApp;
  let admin: Caller;
  beforeAll(async () => ({ t, admin } = await appWithTenant()), 60_000);
  afterAll(() => t.close());

  describe('GET /permissions', () => {
    it('lists the whole catalogue to any valid key', async () => {
      const expiring = await createApplication(t, admin.key, VALID.expiring);
      const res = await as(t, expiring.key).get('/permissions').expect(200);
      expect(res.body).toHaveLength(PERMISSIONS.length);
      for (const item of res.body) {
        expect(item).toEqual({ type: expect.stringMatching(/^[a-z]+:[a-z]+$/), description: expect.any(String), application_types: expect.any(Array) });
      }
      expect(res.body.find((p: { type: string }) => p.type === 'proxy:invoke')).toMatchObject({
        application_types: expect.arrayContaining(['private', 'management']),
      });
    });

    it.each(APPLICATION_TYPES)('filters by application_type=%s', async (type) => {
      const res = await as(t, admin.key).get(`/permissions?application_type=${type}`).expect(200);
      const expected = PERMISSIONS.filter((p) => (p.applicationTypes as readonly string[]).includes(type)).map((p) => p.type);
      expect(res.body.map((p: { type: string }) => p.type).sort()).toEqual(expected.sort());
      for (const item of res.body) expect(item.application_types).toContain(type);
    });

    it.each([
      ['an unknown type', '?application_type=superuser'],
      ['an empty type', '?application_type='],
      ['a repeated type', '?application_type=private&application_type=public'],
      ['an unknown parameter', '?foo=bar'],
    ])('is a 400 for %s', async (_, query) => {
      const res = await as(t, admin.key).get(`/permissions${query}`);
      expectProblem(res, 400, [query.includes('foo') ? 'foo' : 'application_type']);
    });
  });

  describe('each endpoint needs its permission (403 without it, nothing done)', () => {
    let target: { id: string };
    beforeAll(async () => {
      target = await createApplication(t, admin.key, VALID.private);
    });

    const endpoints: [string, string, (key: string) => Promise<import('supertest').Response>][] = [
      ['application:create', 'POST /applications', (key) => as(t, key).post('/applications', VALID.public)],
      ['application:read', 'GET /applications', (key) => as(t, key).get('/applications')],
      ['application:read', 'GET /applications/{id}', (key) => as(t, key).get(`/applications/${target.id}`)],
      ['application:read', 'GET /applications/key', (key) => as(t, key).get('/applications/key')],
      [
        'application:update',
        'PUT /applications/{id}',
        (key) => as(t, key).put(`/applications/${target.id}`, { name: 'hijacked', permissions: ['token:read'] }),
      ],
      ['application:update', 'POST /applications/{id}/regenerate', (key) => as(t, key).post(`/applications/${target.id}/regenerate`)],
      ['application:delete', 'DELETE /applications/{id}', (key) => as(t, key).delete(`/applications/${target.id}`)],
    ];

    it.each(endpoints)('%s for %s', async (permission, _, call) => {
      const everythingElse = PERMISSIONS.filter((p) => p.applicationTypes.includes('management') && p.type !== permission).map((p) => p.type);
      const caller = await managementWith(t, admin, everythingElse);
      const before = await rowCounts(t, admin.tenantId);
      const targetBefore = (await as(t, admin.key).get(`/applications/${target.id}`).expect(200)).body;
      const res = await call(caller.key);
      expectProblem(res, 403);
      expect(res.body.detail).toContain(permission);
      expect(await rowCounts(t, admin.tenantId)).toEqual(before);
      expect((await as(t, admin.key).get(`/applications/${target.id}`).expect(200)).body).toEqual(targetBefore);

      const holder = await managementWith(t, admin, [permission]);
      expect((await call(holder.key)).status).toBeLessThan(300);
    });

    it('checks the permission before the body: a bad body without permission is a 403', async () => {
      const caller = await managementWith(t, admin, ['application:read']);
      expectProblem(await as(t, caller.key).post('/applications', { nonsense: true }), 403);
    });

    it('gives a private or public application none of the management endpoints', async () => {
      const priv = await createApplication(t, admin.key, { ...VALID.private, permissions: ['token:read', 'proxy:invoke'] });
      const pub = await createApplication(t, admin.key, VALID.public);
      for (const key of [priv.key, pub.key]) {
        for (const [, , call] of endpoints) expectProblem(await call(key), 403);
      }
    });
  });

  describe('can_create_expiring_applications', () => {
    it('lets a private application create expiring applications without application:create', async () => {
      const minter = await createApplication(t, admin.key, { ...VALID.private, can_create_expiring_applications: true });
      const res = await as(t, minter.key)
        .post('/applications', { name: 'reveal once', type: 'expiring', rules: [CONDITION_RULE] })
        .expect(201);
      expect(res.body).toMatchObject({ type: 'expiring', tenant_id: admin.tenantId, created_by: minter.id });
      expect(res.body.key).toMatch(/^key_/);
    });

    it.each(['private', 'public', 'management'] as const)('but not a %s application (403, nothing written)', async (type) => {
      const minter = await createApplication(t, admin.key, { ...VALID.private, can_create_expiring_applications: true });
      const before = await rowCounts(t, admin.tenantId);
      expectProblem(await as(t, minter.key).post('/applications', VALID[type]), 403);
      expect(await rowCounts(t, admin.tenantId)).toEqual(before);
    });

    it('and nothing else', async () => {
      const minter = await createApplication(t, admin.key, { ...VALID.private, can_create_expiring_applications: true });
      const child = await as(t, minter.key).post('/applications', VALID.expiring).expect(201);
      expectProblem(await as(t, minter.key).get('/applications'), 403);
      expectProblem(await as(t, minter.key).get(`/applications/${child.body.id}`), 403);
      expectProblem(await as(t, minter.key).get('/applications/key'), 403);
      expectProblem(await as(t, minter.key).put(`/applications/${child.body.id}`, { name: 'x', permissions: ['token:read'] }), 403);
      expectProblem(await as(t, minter.key).post(`/applications/${child.body.id}/regenerate`), 403);
      expectProblem(await as(t, minter.key).delete(`/applications/${child.body.id}`), 403);
    });

    it('is not granted by a false flag', async () => {
      const app = await createApplication(t, admin.key, { ...VALID.private, can_create_expiring_applications: false });
      expectProblem(await as(t, app.key).post('/applications', VALID.expiring), 403);
    });

    it('still validates what it creates', async () => {
      const minter = await createApplication(t, admin.key, { ...VALID.private, can_create_expiring_applications: true });
      expectProblem(await as(t, minter.key).post('/applications', { ...VALID.expiring, permissions: ['token:search'] }), 400, ['permissions[0]']);
    });
  });

  describe("another tenant's application", () => {
    let mine: { id: string; key: string };
    let mineKeyHash: string;
    let stranger: Caller;
    const keyHashOf = async (id: string): Promise<string | undefined> =>
      (await t.database.dataSource.query('SELECT key_hash FROM applications WHERE id = $1', [id]))[0]?.key_hash;
    beforeAll(async () => {
      mine = await createApplication(t, admin.key, VALID.private);
      mineKeyHash = (await keyHashOf(mine.id))!;
      stranger = await newTenant(t);
    });

    /** Neither renamed nor deleted, and its key was not regenerated: the stored hash is the same and the key still works. */
    async function expectUntouched() {
      const res = await as(t, admin.key).get(`/applications/${mine.id}`).expect(200);
      expect(res.body.name).toBe(VALID.private.name);
      expect(mineKeyHash).toEqual(expect.any(String));
      expect(await keyHashOf(mine.id)).toBe(mineKeyHash);
      await as(t, mine.key).get('/permissions').expect(200);
    }

    it.each([
      ['GET', (key: string) => as(t, key).get(`/applications/${mine.id}`)],
      ['PUT', (key: string) => as(t, key).put(`/applications/${mine.id}`, { name: 'stolen', permissions: ['token:read'] })],
      ['regenerate', (key: string) => as(t, key).post(`/applications/${mine.id}/regenerate`)],
      ['DELETE', (key: string) => as(t, key).delete(`/applications/${mine.id}`)],
    ])('is a 404 for %s, exactly like an id that does not exist', async (_, call) => {
      const before = await rowCounts(t, admin.tenantId);
      const res = await call(stranger.key);
      expectProblem(res, 404);
      const missing = await as(t, stranger.key).get(`/applications/${ANY_UUID}`);
      expect(res.body.detail).toBe(missing.body.detail);
      await expectUntouched();
      expect(await rowCounts(t, admin.tenantId)).toEqual(before);
    });

    it('never shows in a list, even asked for by id', async () => {
      const all = await as(t, stranger.key).get('/applications?size=100').expect(200);
      expect(all.body.data.map((a: { id: string }) => a.id)).not.toContain(mine.id);
      expect(all.body.data.every((a: { tenant_id: string }) => a.tenant_id === stranger.tenantId)).toBe(true);
      const byId = await as(t, stranger.key).get(`/applications?id=${mine.id}`).expect(200);
      expect(byId.body).toEqual({ pagination: { total_items: 0, page_number: 1, page_size: 20, total_pages: 0 }, data: [] });
      const mixed = await as(t, stranger.key).get(`/applications?id=${mine.id}&id=${stranger.applicationId}`).expect(200);
      expect(mixed.body.data.map((a: { id: string }) => a.id)).toEqual([stranger.applicationId]);
    });
  });
});
