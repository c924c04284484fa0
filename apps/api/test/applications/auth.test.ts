import type { TestApp } from '@gatehouse/test-support/test-app';
import { appWithTenant, as, Caller, createApplication, expectProblem, managementWith, VALID } from '../support/application-fixtures';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('API-key authentication', () => {
  let t: TestApp;
  let admin: Caller;
  beforeAll(async () => ({ t, admin } = await appWithTenant()), 60_000);
  afterAll(() => t.close());

  function expect401(res: import('supertest').Response) {
    expectProblem(res, 401);
    expect(res.body.detail).toEqual(expect.any(String));
    expect(res.body).not.toHaveProperty('errors');
  }

  describe('is a 401 for', () => {
    it('a missing header', async () => {
      expect401(await t.http().get('/applications'));
    });

    it.each([
      ['an empty key', ''],
      ['a malformed key', 'not-a-key'],
      ['a key without its prefix', 'A'.repeat(40)],
      ['a truncated key', 'key_abc'],
      ['a well-formed unknown key', `key_${'Z'.repeat(40)}`],
      ['a 5 KB key', `key_${'a'.repeat(5000)}`],
      ['an SQL-looking key', "key_' OR '1'='1' -- aaaaaaaaaaaaaaaaaaaaaaa"],
    ])('%s', async (_, key) => {
      expect401(await t.http().get('/applications').set('SVC-API-KEY', key));
    });

    it('a real key with one character changed', async () => {
      const last = admin.key.at(-1) === 'a' ? 'b' : 'a';
      expect401(await as(t, admin.key.slice(0, -1) + last).get('/applications'));
    });

    it('a real key in another header', async () => {
      expect401(await t.http().get('/applications').set('Authorization', `Bearer ${admin.key}`));
      expect401(await t.http().get('/applications').set('X-API-KEY', admin.key));
    });

    it('a real key sent twice in one header list', async () => {
      // Two SVC-API-KEY headers arrive joined by a comma, which is no key.
      expect401(await t.http().get('/applications').set('SVC-API-KEY', `${admin.key}, ${admin.key}`));
    });

    it('a real key sent as a query parameter', async () => {
      expect401(await t.http().get(`/applications?svc-api-key=${admin.key}`));
    });

    it('every application endpoint and GET /permissions, before anything else is looked at', async () => {
      const id = admin.applicationId;
      for (const res of [
        await t.http().get('/applications'),
        await t.http().post('/applications').send(VALID.private),
        await t.http().post('/applications').send({ bogus: true }),
        await t.http().get(`/applications/${id}`),
        await t.http().get('/applications/not-a-uuid'),
        await t.http().get('/applications/key'),
        await t
          .http()
          .put(`/applications/${id}`)
          .send({ name: 'x', permissions: ['token:read'] }),
        await t.http().post(`/applications/${id}/regenerate`),
        await t.http().delete(`/applications/${id}`),
        await t.http().get('/permissions'),
      ]) {
        expect401(res);
      }
      // Nothing above may have touched the caller's own application.
      await as(t, admin.key).get('/applications/key').expect(200);
    });
  });

  it('accepts the header name in any case', async () => {
    for (const name of ['SVC-API-KEY', 'svc-api-key', 'Svc-Api-Key', 'sVc-aPi-KeY']) {
      const res = await t.http().get('/applications/key').set(name, admin.key).expect(200);
      expect(res.body.id).toBe(admin.applicationId);
    }
  });

  describe('takes effect at once', () => {
    it('regenerate: the old key is refused on the very next request, the new one works', async () => {
      const app = await createApplication(t, admin.key, VALID.management);
      await as(t, app.key).get('/applications/key').expect(200);
      const res = await as(t, admin.key).post(`/applications/${app.id}/regenerate`).expect(200);
      expect401(await as(t, app.key).get('/applications/key'));
      await as(t, res.body.key).get('/applications/key').expect(200);
    });

    it('regenerating its own key: the caller is refused with the key it just used', async () => {
      const self = await managementWith(t, admin, ['application:update', 'application:read']);
      const res = await as(t, self.key).post(`/applications/${self.id}/regenerate`).expect(200);
      expect401(await as(t, self.key).get('/applications/key'));
      await as(t, res.body.key).get('/applications/key').expect(200);
    });

    it("delete: the deleted application's key is refused on the very next request", async () => {
      const app = await createApplication(t, admin.key, VALID.management);
      await as(t, app.key).get('/applications/key').expect(200);
      await as(t, admin.key).delete(`/applications/${app.id}`).expect(204);
      expect401(await as(t, app.key).get('/applications/key'));
      expect401(await as(t, app.key).get('/permissions'));
    });

    it('removing application:read by PUT makes the next GET /applications a 403', async () => {
      const app = await managementWith(t, admin, ['application:read', 'log:read']);
      await as(t, app.key).get('/applications').expect(200);
      await as(t, admin.key)
        .put(`/applications/${app.id}`, { name: 'reader no more', permissions: ['log:read'] })
        .expect(200);
      expectProblem(await as(t, app.key).get('/applications'), 403);
    });

    it('granting application:read by PUT makes the next GET /applications a 200', async () => {
      const app = await managementWith(t, admin, ['log:read']);
      expectProblem(await as(t, app.key).get('/applications'), 403);
      await as(t, admin.key)
        .put(`/applications/${app.id}`, { name: 'reader now', permissions: ['log:read', 'application:read'] })
        .expect(200);
      await as(t, app.key).get('/applications').expect(200);
    });

    it('turning can_create_expiring_applications off takes the right away at once', async () => {
      const minter = await createApplication(t, admin.key, { ...VALID.private, can_create_expiring_applications: true });
      await as(t, minter.key).post('/applications', VALID.expiring).expect(201);
      await as(t, admin.key)
        .put(`/applications/${minter.id}`, { name: 'minter', permissions: ['token:read'] })
        .expect(200);
      expectProblem(await as(t, minter.key).post('/applications', VALID.expiring), 403);
    });
  });

  it("refuses an expiring application's key once expires_at has passed, though nothing deleted it", async () => {
    const expiresAt = new Date(Date.now() + 2_000);
    const app = await createApplication(t, admin.key, { ...VALID.expiring, expires_at: expiresAt.toISOString() });
    // Any valid key may read the catalogue: this proves the key works before its time.
    await as(t, app.key).get('/permissions').expect(200);
    await sleep(Math.max(0, expiresAt.getTime() - Date.now()) + 250);
    expect401(await as(t, app.key).get('/permissions'));
    const [row] = await t.database.dataSource.query('SELECT id FROM applications WHERE id = $1', [app.id]);
    expect(row?.id).toBe(app.id);
  });

  it('never echoes the presented key in an error', async () => {
    const bogus = `key_${'Q'.repeat(40)}`;
    const res = await t.http().get('/applications').set('SVC-API-KEY', bogus);
    expect401(res);
    expect(res.text).not.toContain(bogus);
  });
});
