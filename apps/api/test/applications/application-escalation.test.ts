import type { Response } from 'supertest';
import type { Proxy } from '@gatehouse/domain';
import { MANAGEMENT_PERMISSIONS } from '@gatehouse/domain';
import type { TestApp } from '@gatehouse/test-support/test-app';
import type { Upstream } from '@gatehouse/test-support/upstream';
import { SvcBridgeListener } from '../../src/proxy-invocation/svc-bridge';
import {
  appWithUpstream,
  as,
  auditEvents,
  Caller,
  CONDITION_RULE,
  createApplication,
  expectProblem,
  managementWith,
  newTenant,
  VALID,
} from '../support/application-fixtures';

// Transforms run in a sandbox pool started per file.
jest.setTimeout(30_000);

/**
 * No escalation between applications (CONTRACT.md section 11): a key may update, regenerate or delete another
 * application, or bind a proxy (whose transforms then act as it through svc) to one, only if everything that
 * application can do is within what the key holds. Each refusal is a 403 that says why and changes nothing.
 */
describe('no escalation between applications', () => {
  let t: TestApp;
  let upstream: Upstream;

  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ t, upstream, close } = await appWithUpstream());
  }, 60_000);
  afterAll(() => close?.());

  const keyHashOf = async (id: string): Promise<string | undefined> =>
    (await t.database.dataSource.query('SELECT key_hash FROM applications WHERE id = $1', [id]))[0]?.key_hash;

  /** What a refused request must leave alone: the target row, and the tenant's audit trail. */
  async function snapshot(tenantId: string, id: string) {
    const [row] = await t.database.dataSource.query('SELECT * FROM applications WHERE id = $1', [id]);
    return { row, events: (await auditEvents(t, { tenantId })).length };
  }

  function expectEscalation(res: Response, action: string, powers: string[]) {
    expectProblem(res, 403);
    expect(res.body.detail).toContain(`may not ${action} an application that can do more than it can`);
    for (const power of powers) expect(res.body.detail).toContain(power);
  }

  const VERBS = [
    ['PUT', 'update', (key: string, id: string) => as(t, key).put(`/applications/${id}`, { name: 'taken', permissions: ['application:read'] })],
    ['regenerate', 'regenerate the key of', (key: string, id: string) => as(t, key).post(`/applications/${id}/regenerate`)],
    ['DELETE', 'delete', (key: string, id: string) => as(t, key).delete(`/applications/${id}`)],
  ] as const;

  describe('the holes of the issue', () => {
    it('a key holding only application:update cannot get a new key for the all-powerful application', async () => {
      const admin = await newTenant(t);
      const weak = await managementWith(t, admin, ['application:update']);
      const before = await snapshot(admin.tenantId, admin.applicationId);
      const res = await as(t, weak.key).post(`/applications/${admin.applicationId}/regenerate`);
      expectEscalation(res, 'regenerate the key of', ['application:create', 'log:read', 'proxy:delete']);
      expect(res.body.key).toBeUndefined();
      expect(await snapshot(admin.tenantId, admin.applicationId)).toEqual(before);
      await as(t, admin.key).get('/applications/key').expect(200);
    });

    it('nor PUT it down to a subset of its own permissions', async () => {
      const admin = await newTenant(t);
      const weak = await managementWith(t, admin, ['application:update', 'application:read']);
      const before = await snapshot(admin.tenantId, admin.applicationId);
      const res = await as(t, weak.key).put(`/applications/${admin.applicationId}`, { name: 'disarmed', permissions: ['application:read'] });
      expectEscalation(res, 'update', ['log:read']);
      expect(await snapshot(admin.tenantId, admin.applicationId)).toEqual(before);
      const root = await as(t, admin.key).get(`/applications/${admin.applicationId}`).expect(200);
      expect(root.body.permissions.sort()).toEqual([...MANAGEMENT_PERMISSIONS].sort());
    });
  });

  describe.each(VERBS)('%s', (_, action, call) => {
    it('is refused on an application holding a management permission the caller lacks', async () => {
      const admin = await newTenant(t);
      const caller = await managementWith(t, admin, ['application:update', 'application:delete', 'application:read']);
      const stronger = await createApplication(t, admin.key, { name: 'stronger', type: 'management', permissions: ['application:read', 'log:read'] });
      const before = await snapshot(admin.tenantId, stronger.id);
      expectEscalation(await call(caller.key, stronger.id), action, ['log:read']);
      expect(await snapshot(admin.tenantId, stronger.id)).toEqual(before);
      await as(t, stronger.key).get('/applications/key').expect(200);
    });

    it('is refused on a private application with can_create_expiring_applications unless the caller may create applications', async () => {
      const admin = await newTenant(t);
      const minter = await createApplication(t, admin.key, { ...VALID.private, can_create_expiring_applications: true });
      const without = await managementWith(t, admin, ['application:update', 'application:delete', 'application:read']);
      const before = await snapshot(admin.tenantId, minter.id);
      expectEscalation(await call(without.key, minter.id), action, ['can_create_expiring_applications (which needs application:create)']);
      expect(await snapshot(admin.tenantId, minter.id)).toEqual(before);
      const withCreate = await managementWith(t, admin, ['application:update', 'application:delete', 'application:read', 'application:create']);
      const put =
        action === 'update'
          ? as(t, withCreate.key).put(`/applications/${minter.id}`, { name: 'minter', permissions: ['token:read'] })
          : call(withCreate.key, minter.id);
      expect((await put).status).toBeLessThan(300);
    });

    it("counts proxy:invoke in a private application's rules", async () => {
      const admin = await newTenant(t);
      const invoker = await createApplication(t, admin.key, {
        ...VALID.private,
        rules: [{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['proxy:invoke'] }],
      });
      const caller = await managementWith(t, admin, ['application:update', 'application:delete', 'application:read']);
      expectEscalation(await call(caller.key, invoker.id), action, ['proxy:invoke']);
    });

    it('is allowed on an application the caller covers (token permissions, which no management key holds, included)', async () => {
      const admin = await newTenant(t);
      const caller = await managementWith(t, admin, ['application:update', 'application:delete', 'application:read']);
      const weaker = await createApplication(t, admin.key, { name: 'reader', type: 'management', permissions: ['application:read'] });
      const backend = await createApplication(t, admin.key, VALID.private);
      expect((await call(caller.key, weaker.id)).status).toBeLessThan(300);
      const res =
        action === 'update'
          ? await as(t, caller.key).put(`/applications/${backend.id}`, { name: 'b', permissions: ['token:use'] })
          : await call(caller.key, backend.id);
      expect(res.status).toBeLessThan(300);
    });
  });

  it('lets an application regenerate its own key, whatever it holds', async () => {
    const admin = await newTenant(t);
    const self = await managementWith(t, admin, ['application:update']);
    const res = await as(t, self.key).post(`/applications/${self.id}/regenerate`).expect(200);
    await as(t, self.key).get('/permissions').expect(401);
    await as(t, res.body.key).get('/permissions').expect(200);
  });

  it('refuses an update granting can_create_expiring_applications without application:create', async () => {
    const admin = await newTenant(t);
    const backend = await createApplication(t, admin.key, VALID.private);
    const caller = await managementWith(t, admin, ['application:update']);
    const before = await snapshot(admin.tenantId, backend.id);
    const res = await as(t, caller.key).put(`/applications/${backend.id}`, { name: 'b', permissions: ['token:read'], can_create_expiring_applications: true });
    expectProblem(res, 403);
    expect(res.body.detail).toBe(
      'This application may not grant what it does not hold itself: can_create_expiring_applications (which needs application:create)',
    );
    expect(await snapshot(admin.tenantId, backend.id)).toEqual(before);
  });

  describe('proxies bound to an application (their transforms act as it through svc)', () => {
    const proxyBody = (applicationId?: string) => ({
      name: 'bound',
      destination_url: upstream.origin,
      ...(applicationId ? { application: { id: applicationId } } : {}),
    });

    it('a key holding only proxy:create or proxy:update cannot bind or rebind one to a stronger application', async () => {
      const admin = await newTenant(t);
      const minter = await createApplication(t, admin.key, { ...VALID.private, can_create_expiring_applications: true });
      const plain = await createApplication(t, admin.key, VALID.private);
      const weak = await managementWith(t, admin, ['proxy:create', 'proxy:update']);
      const events = (await auditEvents(t, { tenantId: admin.tenantId })).length;
      const created = await as(t, weak.key).post('/proxies', proxyBody(minter.id));
      expect(created.body.detail).toMatch(/may not bind a proxy to an application .*can_create_expiring_applications/);
      expectProblem(created, 403);
      const proxy = await as(t, weak.key).post('/proxies', proxyBody(plain.id)).expect(201);
      const rebound = await as(t, weak.key).put(`/proxies/${proxy.body.id}`, proxyBody(minter.id));
      expectProblem(rebound, 403);
      const patched = await t
        .http()
        .patch(`/proxies/${proxy.body.id}`)
        .set('svc-api-key', weak.key)
        .set('content-type', 'application/merge-patch+json')
        .send({ application: { id: minter.id } });
      expectProblem(patched, 403);
      expect((await as(t, admin.key).get(`/proxies/${proxy.body.id}`).expect(200)).body.application_id).toBe(plain.id);
      expect(await auditEvents(t, { tenantId: admin.tenantId })).toHaveLength(events + 1);
    });

    it('nor change the code of a proxy already bound to one, which would wield it', async () => {
      const admin = await newTenant(t);
      const minter = await createApplication(t, admin.key, { ...VALID.private, can_create_expiring_applications: true });
      const proxy = await as(t, admin.key).post('/proxies', proxyBody(minter.id)).expect(201);
      const weak = await managementWith(t, admin, ['proxy:update']);
      const code =
        "module.exports = async (req) => ({ body: await req.svc.applications.create({ name: 'x', type: 'expiring', permissions: ['token:read'] }) });";
      const res = await t
        .http()
        .patch(`/proxies/${proxy.body.id}`)
        .set('svc-api-key', weak.key)
        .set('content-type', 'application/merge-patch+json')
        .send({ request_transform: { code } });
      expectProblem(res, 403);
      expect((await as(t, admin.key).get(`/proxies/${proxy.body.id}`).expect(200)).body.request_transform).toBeUndefined();
    });
  });

  describe('rate limits are powers too', () => {
    // Limited to 1,000 a minute: never reached here, and still a limit an unlimited application escapes.
    const LIMIT = { limit: 1000, window_seconds: 60 };

    it('a limited key cannot mint an application without a limit or with a looser one, lift its own, nor take over or bind an unlimited one', async () => {
      const admin = await newTenant(t);
      const limited = await createApplication(t, admin.key, {
        name: 'limited admin',
        type: 'management',
        permissions: [...MANAGEMENT_PERMISSIONS],
        rate_limit: LIMIT,
      });
      const unlimited = await createApplication(t, admin.key, VALID.private);
      const events = (await auditEvents(t, { tenantId: admin.tenantId })).length;
      const before = await snapshot(admin.tenantId, unlimited.id);
      const api = as(t, limited.key);

      const minted = await api.post('/applications', { name: 'free', type: 'management', permissions: ['log:read'] });
      expectProblem(minted, 403);
      expect(minted.body.detail).toBe(
        "This application may not grant what it does not hold itself: no rate limit, looser than this application's own (1000 requests per 60 s)",
      );
      expectProblem(
        await api.post('/applications', { name: 'fast', type: 'management', permissions: ['log:read'], rate_limit: { limit: 100, window_seconds: 1 } }),
        403,
      );
      const lifted = await api.put(`/applications/${limited.id}`, { name: 'limited admin', permissions: [...MANAGEMENT_PERMISSIONS] });
      expectProblem(lifted, 403);
      expect(lifted.body.detail).toContain('no rate limit');
      for (const [, action, act] of VERBS) expectEscalation(await act(limited.key, unlimited.id), action, ['that application has no rate limit']);
      const bound = await api.post('/proxies', { name: 'bound', destination_url: upstream.origin, application: { id: unlimited.id } });
      expectEscalation(bound, 'bind a proxy to', ['no rate limit']);
      expect(await snapshot(admin.tenantId, unlimited.id)).toEqual(before);
      expect((await as(t, admin.key).get(`/applications/${limited.id}`).expect(200)).body.rate_limit).toEqual(LIMIT);
      expect(await auditEvents(t, { tenantId: admin.tenantId })).toHaveLength(events);

      // Within its own limit it works as before: a tighter child, its own limit tightened, a tighter application regenerated.
      const child = await api
        .post('/applications', { name: 'child', type: 'private', permissions: ['token:read'], rate_limit: { limit: 10, window_seconds: 60 } })
        .expect(201);
      await api.post(`/applications/${child.body.id}/regenerate`).expect(200);
      await api
        .put(`/applications/${limited.id}`, { name: 'limited admin', permissions: [...MANAGEMENT_PERMISSIONS], rate_limit: { limit: 500, window_seconds: 60 } })
        .expect(200);
    });
  });

  describe('through svc', () => {
    const outcome = `const settle = (p) => p.then((body) => ({ ok: true, body }), (e) => ({ ok: false, status: e.status, detail: e.body && e.body.detail }));`;

    /** Runs `script` (with `req` and `settle` in scope) in the response transform of a proxy bound to `applicationId`. */
    async function runAs(owner: Caller, applicationId: string, script: string): Promise<any> {
      const code = `module.exports = async function (req) { ${outcome} const value = await (async () => { ${script} })();
        return { status: 200, headers: { 'content-type': 'application/json' }, body: { value } }; };`;
      const proxy = await as(t, owner.key)
        .post('/proxies', {
          name: 'svc',
          destination_url: upstream.origin,
          require_auth: false,
          response_transform: { code },
          application: { id: applicationId },
        })
        .expect(201);
      const res = await t.http().get('/proxy').set('svc-proxy-key', proxy.body.key);
      expect(res.status).toBe(200);
      return res.body.value;
    }

    it('an application minting expiring applications grants only what it holds, and acts on no other application', async () => {
      const admin = await newTenant(t);
      const minter = await createApplication(t, admin.key, { ...VALID.private, permissions: ['token:search'], can_create_expiring_applications: true });
      const value = await runAs(
        admin,
        minter.id,
        `return {
           escalated: await settle(req.svc.applications.create({ name: 'x', type: 'expiring', rules: [${JSON.stringify({ ...CONDITION_RULE, permissions: ['token:read'] })}] })),
           regenerate: await settle(req.svc.applications.regenerate('${admin.applicationId}')),
           remove: await settle(req.svc.applications.delete('${admin.applicationId}')),
           update: await settle(req.svc.applications.update('${admin.applicationId}', { name: 'x', permissions: ['application:read'] })),
         };`,
      );
      expect(value.escalated).toEqual({ ok: false, status: 403, detail: 'This application may not grant what it does not hold itself: token:read' });
      for (const verb of ['regenerate', 'remove', 'update']) expect(value[verb]).toMatchObject({ ok: false, status: 403 });
      await as(t, admin.key).get('/applications/key').expect(200);

      const reader = await createApplication(t, admin.key, { ...VALID.private, permissions: ['token:read'], can_create_expiring_applications: true });
      const allowed = await runAs(
        admin,
        reader.id,
        `return settle(req.svc.applications.create({ name: 'y', type: 'expiring', permissions: ['token:read'] }));`,
      );
      expect(allowed).toMatchObject({ ok: true, body: { type: 'expiring', created_by: reader.id, permissions: ['token:read'] } });
    });

    it('a management identity on the bridge meets the same rule as its key would', async () => {
      const admin = await newTenant(t);
      const weak = await managementWith(t, admin, ['application:update', 'application:delete', 'application:read']);
      const bridge = t.app.get(SvcBridgeListener).bridgeFor({ tenantId: admin.tenantId, applicationId: weak.id, modifiedBy: weak.id } as Proxy)!;
      const hash = await keyHashOf(admin.applicationId);
      for (const [method, path] of [
        ['POST', `/applications/${admin.applicationId}/regenerate`],
        ['DELETE', `/applications/${admin.applicationId}`],
      ] as const) {
        const res = await bridge.request({ method, path });
        expect(res).toMatchObject({ status: 403, body: { detail: expect.stringContaining('that can do more than it can') } });
      }
      const put = await bridge.request({ method: 'PUT', path: `/applications/${admin.applicationId}`, body: { name: 'x', permissions: ['application:read'] } });
      expect(put).toMatchObject({ status: 403, body: { detail: expect.stringContaining('log:read') } });
      expect(await keyHashOf(admin.applicationId)).toBe(hash);
      expect(await bridge.request({ method: 'POST', path: `/applications/${weak.id}/regenerate` })).toMatchObject({
        status: 200,
        body: { key: expect.any(String) },
      });
    });
  });
});
