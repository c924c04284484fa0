import { TestApp } from '@gatehouse/test-support/test-app';
import { auditEvents, createApplication, newTenant } from '../support/application-fixtures';
import { useProxiesApi } from './proxies-api.fixture';

/** Management of proxies: CONTRACT.md sections 3 and 6, spec 2.4, 2.5 and 4.2. */
describe('proxies API', () => {
  const env = useProxiesApi();
  let t: TestApp;
  beforeAll(() => ({ t } = env));
  const { create, createOk, patch } = env;

  describe('GET /proxies/{id}', () => {
    it("404 for another tenant's proxy and for none, 400 for a non-UUID id", async () => {
      const mine = await newTenant(t);
      const theirs = await newTenant(t);
      const foreign = await createOk(theirs);
      await t.http().get(`/proxies/${foreign.id}`).set('svc-api-key', mine.key).expect(404);
      await t.http().get('/proxies/3f1b2c4d-0000-4000-8000-000000000000').set('svc-api-key', mine.key).expect(404);
      const bad = await t.http().get('/proxies/not-a-uuid').set('svc-api-key', mine.key).expect(400);
      expect(bad.body.errors).toHaveProperty(['id']);
    });
  });

  describe('PUT /proxies/{id}', () => {
    it('replaces: omitted optional fields return to their defaults, the key and creation stay', async () => {
      const caller = await newTenant(t);
      const app = await createApplication(t, caller.key, { name: 'backend', type: 'private', permissions: ['token:read'] });
      const created = await createOk(caller, {
        request_transform: { code: 'module.exports = async (req) => req.args;' },
        response_transform: { code: 'module.exports = async (req) => req.args;' },
        application: { id: app.id },
        configuration: { A: 'b' },
        require_auth: false,
      });
      const res = await t
        .http()
        .put(`/proxies/${created.id}`)
        .set('svc-api-key', caller.key)
        .send({ name: 'renamed', destination_url: 'https://other.example.com/' })
        .expect(200);
      expect(res.body).toEqual({
        id: created.id,
        tenant_id: caller.tenantId,
        name: 'renamed',
        key: created.key,
        destination_url: 'https://other.example.com/',
        require_auth: true,
        created_by: caller.applicationId,
        created_at: created.created_at,
        modified_by: caller.applicationId,
        modified_at: expect.any(String),
      });
      expect(Date.parse(res.body.modified_at)).toBeGreaterThanOrEqual(Date.parse(created.created_at));
      const got = await t.http().get(`/proxies/${created.id}`).set('svc-api-key', caller.key).expect(200);
      expect(got.body).toEqual(res.body);
      expect((await auditEvents(t, { entityId: created.id })).map((e) => e.operation).sort()).toEqual(['create', 'update']);
    });

    it('validates like a create, and 404s for another tenant', async () => {
      const caller = await newTenant(t);
      const other = await newTenant(t);
      const created = await createOk(caller);
      const bad = await t
        .http()
        .put(`/proxies/${created.id}`)
        .set('svc-api-key', caller.key)
        .send({ name: 'p', destination_url: 'https://a.example.com', request_transform: { code: 'module.exports = (' }, key: 'x' })
        .expect(400);
      expect(bad.body.errors).toHaveProperty(['key']);
      const noCompile = await t
        .http()
        .put(`/proxies/${created.id}`)
        .set('svc-api-key', caller.key)
        .send({ name: 'p', destination_url: 'https://a.example.com', request_transform: { code: 'module.exports = (' } })
        .expect(400);
      expect(noCompile.body.errors['request_transform.code']).toEqual([expect.stringMatching(/line 1, column \d+/)]);
      await t.http().put(`/proxies/${created.id}`).set('svc-api-key', other.key).send({ name: 'p', destination_url: 'https://a.example.com' }).expect(404);
      const unchanged = await t.http().get(`/proxies/${created.id}`).set('svc-api-key', caller.key).expect(200);
      expect(unchanged.body.name).toBe('payments');
    });
  });

  describe('PATCH /proxies/{id}', () => {
    it('merges (RFC 7396): named fields change, null clears, objects merge member by member', async () => {
      const caller = await newTenant(t);
      const app = await createApplication(t, caller.key, { name: 'backend', type: 'private', permissions: ['token:read'] });
      const created = await createOk(caller, {
        request_transform: { code: 'module.exports = async (req) => req.args;' },
        application: { id: app.id },
        configuration: { KEEP: '1', DROP: '2', CHANGE: '3' },
        require_auth: false,
      });
      const res = await patch(caller, created.id, {
        name: 'patched',
        configuration: { DROP: null, CHANGE: 'three', ADD: '4' },
        request_transform: null,
        response_transform: { code: 'module.exports = async (req) => ({ body: req.args.body, headers: req.args.headers, status: 299 });' },
      }).expect(200);
      expect(res.body).toMatchObject({
        name: 'patched',
        key: created.key,
        destination_url: created.destination_url,
        application_id: app.id,
        configuration: { KEEP: '1', CHANGE: 'three', ADD: '4' },
        require_auth: false,
        response_transform: { code: expect.stringContaining('status: 299') },
        modified_at: expect.any(String),
      });
      expect(res.body).not.toHaveProperty('request_transform');

      const cleared = await patch(caller, created.id, { application: null, configuration: null, require_auth: null }).expect(200);
      expect(cleared.body).not.toHaveProperty('application_id');
      expect(cleared.body).not.toHaveProperty('configuration');
      expect(cleared.body.require_auth).toBe(true);
      const got = await t.http().get(`/proxies/${created.id}`).set('svc-api-key', caller.key).expect(200);
      expect(got.body).toEqual(cleared.body);
      expect((await auditEvents(t, { entityId: created.id })).map((e) => e.operation).sort()).toEqual(['create', 'update', 'update']);
    });

    it('holds the merged result to the rules of a PUT body', async () => {
      const caller = await newTenant(t);
      const created = await createOk(caller);
      for (const [body, field] of [
        [{ name: null }, 'name'],
        [{ destination_url: null }, 'destination_url'],
        [{ destination_url: 'ftp://x.example.com' }, 'destination_url'],
        [{ name: 'n'.repeat(201) }, 'name'],
        [{ configuration: { A: 5 } }, 'configuration.A'],
        [{ request_transform: { code: 'module.exports = {' } }, 'request_transform.code'],
        [{ application: { id: '3f1b2c4d-0000-4000-8000-000000000000' } }, 'application.id'],
        [{ key: 'abcdefghijklmnopqrstuvwxyz' }, 'key'],
        [{ require_auth: 'no' }, 'require_auth'],
      ] as const) {
        const res = await patch(caller, created.id, body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(res.body.errors).toHaveProperty([field]);
      }
      const unchanged = await t.http().get(`/proxies/${created.id}`).set('svc-api-key', caller.key).expect(200);
      expect(unchanged.body.name).toBe('payments');
      expect((await auditEvents(t, { entityId: created.id })).map((e) => e.operation)).toEqual(['create']);
    });

    it('a bodiless PATCH, POST or PUT is a 400 (a merge patch is a JSON object; strict input, issue 9)', async () => {
      const caller = await newTenant(t);
      const created = await createOk(caller);
      const res = await t.http().patch(`/proxies/${created.id}`).set('svc-api-key', caller.key);
      expect(res.status).toBe(400);
      expect(res.body.detail).toBe('The request body must be a JSON object');
      await t.http().post('/proxies').set('svc-api-key', caller.key).expect(400);
      await t.http().put(`/proxies/${created.id}`).set('svc-api-key', caller.key).expect(400);
    });

    it('415 unless the body is application/merge-patch+json; 404 for another tenant', async () => {
      const caller = await newTenant(t);
      const other = await newTenant(t);
      const created = await createOk(caller);
      await t.http().patch(`/proxies/${created.id}`).set('svc-api-key', caller.key).send({ name: 'x' }).expect(415);
      await patch(other, created.id, { name: 'x' }).expect(404);
      await patch(caller, created.id, []).expect(400);
    });
  });

  describe('DELETE /proxies/{id}', () => {
    it("204, then gone; another tenant's is a 404", async () => {
      const caller = await newTenant(t);
      const other = await newTenant(t);
      const created = await createOk(caller);
      await t.http().delete(`/proxies/${created.id}`).set('svc-api-key', other.key).expect(404);
      const res = await t.http().delete(`/proxies/${created.id}`).set('svc-api-key', caller.key).expect(204);
      expect(res.text).toBe('');
      await t.http().get(`/proxies/${created.id}`).set('svc-api-key', caller.key).expect(404);
      await t.http().delete(`/proxies/${created.id}`).set('svc-api-key', caller.key).expect(404);
      expect((await auditEvents(t, { entityId: created.id })).map((e) => e.operation).sort()).toEqual(['create', 'delete']);
    });
  });

  describe('permissions', () => {
    it('401 without a valid key; 403 without the endpoint permission', async () => {
      const caller = await newTenant(t);
      const created = await createOk(caller);
      await t.http().get('/proxies').expect(401);
      await t.http().get('/proxies').set('svc-api-key', 'key_notarealkeynotarealkeynotarealkey12').expect(401);

      const readOnly = await createApplication(t, caller.key, { name: 'reader', type: 'management', permissions: ['proxy:read'] });
      const reader = { ...caller, key: readOnly.key as string };
      await t.http().get('/proxies').set('svc-api-key', reader.key).expect(200);
      await t.http().get(`/proxies/${created.id}`).set('svc-api-key', reader.key).expect(200);
      await create(reader, { name: 'p', destination_url: 'https://a.example.com' }).expect(403);
      await t.http().put(`/proxies/${created.id}`).set('svc-api-key', reader.key).send({ name: 'p', destination_url: 'https://a.example.com' }).expect(403);
      await patch(reader, created.id, { name: 'x' }).expect(403);
      await t.http().delete(`/proxies/${created.id}`).set('svc-api-key', reader.key).expect(403);

      const writer = await createApplication(t, caller.key, {
        name: 'writer',
        type: 'management',
        permissions: ['proxy:create', 'proxy:update', 'proxy:delete'],
      });
      await t.http().get('/proxies').set('svc-api-key', writer.key).expect(403);
      await t.http().get(`/proxies/${created.id}`).set('svc-api-key', writer.key).expect(403);
      await patch({ ...caller, key: writer.key }, created.id, { name: 'by writer' }).expect(200);
      await t.http().delete(`/proxies/${created.id}`).set('svc-api-key', writer.key).expect(204);

      const priv = await createApplication(t, caller.key, { name: 'backend', type: 'private', permissions: ['proxy:invoke'] });
      await t.http().get('/proxies').set('svc-api-key', priv.key).expect(403);
    });
  });
});
