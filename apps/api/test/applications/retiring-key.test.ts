import type { Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { RequestMethod } from '@nestjs/common/enums/request-method.enum.js';
import { ModulesContainer } from '@nestjs/core';
import { LASTING_PERMISSIONS, MANAGEMENT_PERMISSIONS } from '@gatehouse/domain';
import type { TestApp } from '@gatehouse/test-support/test-app';
import type { Upstream } from '@gatehouse/test-support/upstream';
import { REQUIRED_PERMISSION } from '../../src/auth/auth.decorators';
import {
  appWithUpstream,
  as,
  auditEvents,
  Caller,
  createApplication,
  expectProblem,
  managementWith,
  newTenant,
  rowCounts,
} from '../support/application-fixtures';

jest.setTimeout(30_000);

interface Route {
  method: string;
  path: string;
  permission: string | undefined;
}

/** Every route of the running API: its method, its path (`:id` as declared) and the permission it names. */
function routesOf(t: TestApp): Route[] {
  const routes: Route[] = [];
  for (const module of t.app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as Type;
      const base = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = controller.prototype[name];
        const method = typeof handler === 'function' ? (Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined) : undefined;
        if (name === 'constructor' || method === undefined) continue;
        const path = [base, String(Reflect.getMetadata(PATH_METADATA, handler) ?? '')].filter((p) => p && p !== '/').join('/');
        const permission = Reflect.getMetadata(REQUIRED_PERMISSION, handler) ?? Reflect.getMetadata(REQUIRED_PERMISSION, controller);
        routes.push({ method: RequestMethod[method], path: `/${path}`.replace(/\/+/g, '/'), permission });
      }
    }
  }
  return routes;
}

/**
 * Issue 22 section 2: the previous key of a rotation, during its overlap, could not create a proxy but could rewrite an
 * existing one (open it, recode it, bind it to a private application it had just granted
 * can_create_expiring_applications) and read its key back: after the overlap that proxy key still ran its code, and
 * its `svc` minted keys. A key on its way out now may use no permission that leaves authority behind.
 */
describe('a key on its way out leaves no authority behind', () => {
  let t: TestApp;
  let upstream: Upstream;
  let close: (() => Promise<void>) | undefined;
  let admin: Caller;

  beforeAll(async () => {
    ({ t, upstream, close } = await appWithUpstream());
    admin = await newTenant(t);
  }, 60_000);
  afterAll(() => close?.());

  const patch = (key: string, path: string, body: object) =>
    t.http().patch(path).set('SVC-API-KEY', key).set('content-type', 'application/merge-patch+json').send(JSON.stringify(body));

  it('the back door of the issue: no proxy rewrite, no grant, no proxy key read back; nothing changes', async () => {
    // The leaked key: a management application allowed to manage proxies and applications.
    const leaked = await managementWith(t, admin, [...MANAGEMENT_PERMISSIONS]);
    const proxy = (await as(t, leaked.key).post('/proxies', { name: 'payments', destination_url: upstream.origin }).expect(201)).body;
    const backend = await createApplication(t, admin.key, { name: 'backend', type: 'private', permissions: ['token:read'] });
    await as(t, admin.key).post(`/applications/${leaked.id}/regenerate?previous_key_expires_in_seconds=600`).expect(200);
    const before = await rowCounts(t, admin.tenantId);
    const events = (await auditEvents(t, { tenantId: admin.tenantId })).length;

    const attempts = [
      // Grant the private application the power to mint keys...
      as(t, leaked.key).put(`/applications/${backend.id}`, { name: 'backend', permissions: ['token:read'], can_create_expiring_applications: true }),
      // ...then open the proxy, put its own code in it and bind it to that application.
      as(t, leaked.key).put(`/proxies/${proxy.id}`, {
        name: 'payments',
        destination_url: upstream.origin,
        require_auth: false,
        application: { id: backend.id },
        request_transform: { code: 'module.exports = async (req) => ({ body: await req.svc.applications.create({}) })' },
      }),
      patch(leaked.key, `/proxies/${proxy.id}`, { require_auth: false }),
      patch(leaked.key, `/proxies/${proxy.id}`, { configuration: { to: 'attacker' } }),
      // An empty PATCH would read the proxy (its key included) back.
      patch(leaked.key, `/proxies/${proxy.id}`, {}),
    ];
    for (const res of await Promise.all(attempts)) {
      expectProblem(res, 403);
      expect(res.body.detail).toMatch(/previous key of a regenerated application/);
      expect(JSON.stringify(res.body)).not.toContain(proxy.key);
    }
    expect(await rowCounts(t, admin.tenantId)).toEqual(before);
    expect(await auditEvents(t, { tenantId: admin.tenantId })).toHaveLength(events);
    const stored = (await as(t, admin.key).get(`/proxies/${proxy.id}`).expect(200)).body;
    expect(stored).toMatchObject({ require_auth: true });
    expect(stored).not.toHaveProperty('application');
    expect(stored).not.toHaveProperty('request_transform');
    expect((await as(t, admin.key).get(`/applications/${backend.id}`).expect(200)).body).not.toHaveProperty('can_create_expiring_applications', true);

    // It still finishes its work: reads, and deletes.
    await as(t, leaked.key).get(`/proxies/${proxy.id}`).expect(200);
    await as(t, leaked.key).delete(`/proxies/${proxy.id}`).expect(204);
  });

  it('every write route is either refused to a key on its way out, or one whose permission leaves nothing behind', async () => {
    const leaked = await managementWith(t, admin, [...MANAGEMENT_PERMISSIONS]);
    const proxy = (await as(t, admin.key).post('/proxies', { name: 'p', destination_url: upstream.origin }).expect(201)).body;
    await as(t, admin.key).post(`/applications/${leaked.id}/regenerate?previous_key_expires_in_seconds=600`).expect(200);
    const writes = routesOf(t).filter(
      (route) => route.method !== 'GET' && route.method !== 'HEAD' && route.path !== '/proxy' && !route.path.startsWith('/proxy/'),
    );
    // The writes of this round's API, at least; a route added later is classified by its permission below.
    expect(writes.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining([
        'POST /applications',
        'PUT /applications/:id',
        'POST /applications/:id/regenerate',
        'DELETE /applications/:id',
        'POST /proxies',
        'PUT /proxies/:id',
        'PATCH /proxies/:id',
        'DELETE /proxies/:id',
      ]),
    );
    // Writes whose permission ends with the key: deletes, and data (tokens) that carries no authority.
    const endsWithKey = new Set([
      'application:delete',
      'proxy:delete',
      'token:create',
      'token:update',
      'token:delete',
      'token:use',
      'token:read',
      'token:search',
    ]);
    for (const route of writes) {
      expect(route.permission === undefined || LASTING_PERMISSIONS.has(route.permission) || endsWithKey.has(route.permission)).toBe(true);
      if (!route.permission || !LASTING_PERMISSIONS.has(route.permission)) continue;
      // The guard refuses before the body is even read: any body will do (a DELETE takes none).
      const path = route.path.replace(':id', route.path.startsWith('/proxies') ? proxy.id : leaked.id);
      const res = await t
        .http()
        [route.method.toLowerCase() as 'post'](path)
        .set('SVC-API-KEY', leaked.key)
        .set('content-type', route.method === 'PATCH' ? 'application/merge-patch+json' : 'application/json')
        .send(route.method === 'DELETE' ? undefined : '{}');
      expectProblem(res, 403);
      expect(res.body.detail).toMatch(`may not use ${route.permission}`);
    }
  });
});
