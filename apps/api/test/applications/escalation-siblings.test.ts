import { MANAGEMENT_PERMISSIONS } from '@gatehouse/domain';
import type { TestApp } from '@gatehouse/test-support/test-app';
import type { Upstream } from '@gatehouse/test-support/upstream';
import { appWithUpstream, as, auditEvents, Caller, createApplication, expectProblem, managementWith, newTenant } from '../support/application-fixtures';

jest.setTimeout(30_000);

/**
 * Siblings of the escalation holes closed in application-escalation.test.ts, found by attacking the API as an
 * outside suite would: a key that is on its way out taking the rotation back, and a key handing out proxy:invoke (and
 * a looser rate) through a proxy anyone holding its proxy key may call.
 */
describe('escalation siblings', () => {
  let t: TestApp;
  let upstream: Upstream;
  let hits = 0;

  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ t, upstream, close } = await appWithUpstream(() => (hits += 1)));
  }, 60_000);
  afterAll(() => close?.());

  const works = async (key: string) => (await as(t, key).get('/applications/key')).status;

  describe('a key replaced in a rotation cannot mint keys', () => {
    let admin: Caller;
    beforeAll(async () => {
      admin = await newTenant(t);
    });

    it('the previous key cannot regenerate its own application (taking the rotation back) nor any other, nor create one', async () => {
      // A management application that may manage applications: the one whose key leaked and is being rotated out.
      const leaked = await managementWith(t, admin, ['application:create', 'application:read', 'application:update', 'proxy:create']);
      const rotated = await as(t, admin.key).post(`/applications/${leaked.id}/regenerate?previous_key_expires_in_seconds=600`).expect(200);
      const fresh = rotated.body.key as string;
      expect(await works(leaked.key)).toBe(200);
      const events = (await auditEvents(t, { entityId: leaked.id })).length;

      // With the old key, a regenerate of its own application would hand it the current key and retire the new one.
      for (const query of ['', '?previous_key_expires_in_seconds=600']) {
        const res = await as(t, leaked.key).post(`/applications/${leaked.id}/regenerate${query}`);
        expectProblem(res, 403);
        expect(res.body.detail).toMatch(/previous key/);
        expect(res.body).not.toHaveProperty('key');
      }
      const other = await createApplication(t, admin.key, { name: 'other', type: 'management', permissions: ['application:read'] });
      expectProblem(await as(t, leaked.key).post(`/applications/${other.id}/regenerate`), 403);
      expectProblem(await as(t, leaked.key).post('/applications', { name: 'persist', type: 'management', permissions: ['application:read'] }), 403);
      // Nor a proxy, which has a key of its own that would outlive the overlap.
      expectProblem(await as(t, leaked.key).post('/proxies', { name: 'persist', destination_url: upstream.origin }), 403);
      expect(await works(fresh)).toBe(200);
      expect(await works(leaked.key)).toBe(200);
      expect(await works(other.key)).toBe(200);
      expect((await auditEvents(t, { entityId: leaked.id })).length).toBe(events);

      // Everything else it held still works until the overlap ends (the fleet finishes its work), and the new key,
      // which is the application's current one, may regenerate itself as any key may.
      await as(t, leaked.key).get(`/applications/${other.id}`).expect(200);
      const again = await as(t, fresh).post(`/applications/${leaked.id}/regenerate`).expect(200);
      expect(await works(again.body.key)).toBe(200);
      expect(await works(fresh)).toBe(401);
      expect(await works(leaked.key)).toBe(401);
    });
  });

  describe('a proxy anyone may call is a grant of proxy:invoke', () => {
    const create = (key: string, body: object) => as(t, key).post('/proxies', { name: 'open', destination_url: upstream.origin, ...body });

    it('a key without proxy:invoke cannot make or leave a proxy callable without a key', async () => {
      const admin = await newTenant(t);
      expect(MANAGEMENT_PERMISSIONS).toContain('proxy:invoke');
      const writer = await managementWith(t, admin, ['proxy:create', 'proxy:read', 'proxy:update']);
      const events = (await auditEvents(t, { tenantId: admin.tenantId })).length;

      const refused = await create(writer.key, { require_auth: false });
      expectProblem(refused, 403);
      expect(refused.body.detail).toMatch(/proxy:invoke/);
      expect((await as(t, admin.key).get('/proxies').expect(200)).body.data).toHaveLength(0);
      expect(await auditEvents(t, { tenantId: admin.tenantId })).toHaveLength(events);

      // A proxy that needs a key is fine: its callers need proxy:invoke themselves.
      const guarded = await create(writer.key, {}).expect(201);
      const before = hits;
      await t.http().get('/proxy').set('svc-proxy-key', guarded.body.key).expect(401);
      expectProblem(await as(t, writer.key).put(`/proxies/${guarded.body.id}`, { name: 'open', destination_url: upstream.origin, require_auth: false }), 403);
      const patched = await t
        .http()
        .patch(`/proxies/${guarded.body.id}`)
        .set('SVC-API-KEY', writer.key)
        .set('content-type', 'application/merge-patch+json')
        .send(JSON.stringify({ require_auth: false }));
      expectProblem(patched, 403);
      await t.http().get('/proxy').set('svc-proxy-key', guarded.body.key).expect(401);
      expect(hits).toBe(before);

      // An open proxy made by a key that may invoke: a writer without proxy:invoke may still edit it in other ways
      // (its name) without closing it, since it leaves it no more open than it was.
      const open = await create(admin.key, { require_auth: false }).expect(201);
      await t.http().get('/proxy').set('svc-proxy-key', open.body.key).expect(200);
      await as(t, writer.key).put(`/proxies/${open.body.id}`, { name: 'renamed', destination_url: upstream.origin, require_auth: false }).expect(200);
    });

    it('a rate-limited key cannot open a proxy that anyone may call more often than it may', async () => {
      const admin = await newTenant(t);
      const limited = await createApplication(t, admin.key, {
        name: 'limited',
        type: 'management',
        permissions: ['proxy:create', 'proxy:invoke', 'proxy:read'],
        rate_limit: { limit: 5, window_seconds: 60 },
      });
      const refused = await create(limited.key, { require_auth: false });
      expectProblem(refused, 403);
      expect(refused.body.detail).toMatch(/rate limit/);
      expectProblem(await create(limited.key, { require_auth: false, rate_limit: { limit: 50, window_seconds: 60 } }), 403);
      await create(limited.key, { require_auth: false, rate_limit: { limit: 5, window_seconds: 60 } }).expect(201);
      // With require_auth its callers count against their own limits, as any invocation does.
      await create(limited.key, {}).expect(201);
    });
  });
});
