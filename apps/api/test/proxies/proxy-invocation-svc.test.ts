import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request as undiciRequest } from 'undici';
import type { Proxy } from '@gatehouse/domain';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { checkedPath, SvcBridgeListener } from '../../src/proxy-invocation/svc-bridge';
import { Caller, newTenant } from '../support/application-fixtures';

// Apps with their sandbox pools start per file, and some tests run transforms to the reactor's limits.
jest.setTimeout(30_000);

/** `svc` in transforms: a client acting as the proxy's application against this service's own API. */

describe('the svc bridge', () => {
  let t: TestApp;
  let upstream: Upstream;

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ from: 'upstream' }));
    });
    t = await startTestApp({ PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8', REACTOR_POOL_SIZE: '2' });
  });
  afterAll(async () => {
    await t?.close();
    await upstream?.stop();
  });

  async function post(owner: Caller, path: string, body: Record<string, unknown>): Promise<Record<string, any>> {
    const res = await t.http().post(path).set('svc-api-key', owner.key).send(body);
    expect(res.status).toBe(201);
    return res.body;
  }

  /** A proxy whose response transform runs `script` (an async function body with `req` in scope) and answers its value. */
  async function transformProxy(owner: Caller, applicationId: string | undefined, script: string): Promise<string> {
    const code = `module.exports = async function (req) {
      const value = await (async () => { ${script} })();
      return { status: 200, headers: { 'content-type': 'application/json' }, body: { value } };
    };`;
    const proxy = await post(owner, '/proxies', {
      name: 'svc',
      destination_url: upstream.origin,
      require_auth: false,
      response_transform: { code },
      ...(applicationId ? { application: { id: applicationId } } : {}),
    });
    return proxy.key;
  }

  async function run(proxyKey: string): Promise<any> {
    const res = await t.http().get('/proxy').set('svc-proxy-key', proxyKey);
    expect(res.status).toBe(200);
    return res.body.value;
  }

  const outcome = `return (p) => p.then((body) => ({ ok: true, body }), (e) => ({ ok: false, status: e.status, message: String(e.message) }));`;

  it('is present only when the proxy names an application', async () => {
    const owner = await newTenant(t);
    const app = await post(owner, '/applications', { name: 'backend', type: 'private', permissions: ['proxy:invoke'] });
    expect(await run(await transformProxy(owner, undefined, 'return typeof req.svc;'))).toBe('undefined');
    expect(await run(await transformProxy(owner, app.id, 'return typeof req.svc.applications.get;'))).toBe('function');
  });

  it("calls this service's API as the proxy's application, with that application's permissions", async () => {
    const owner = await newTenant(t);
    const app = await post(owner, '/applications', { name: 'backend', type: 'private', permissions: ['proxy:invoke', 'token:read'] });
    const key = await transformProxy(
      owner,
      app.id,
      `const settle = (() => { ${outcome} })();
       return {
         permissions: await settle(req.svc.request({ method: 'GET', path: '/permissions', query: { application_type: 'private' } })),
         self: await settle(req.svc.applications.get('${app.id}')),
         proxies: await settle(req.svc.proxies.list()),
       };`,
    );
    const value = await run(key);
    // Any valid key may read the catalogue: the bridge authenticated as an application of this tenant.
    expect(value.permissions.ok).toBe(true);
    expect(value.permissions.body.map((p: { type: string }) => p.type)).toEqual(expect.arrayContaining(['proxy:invoke', 'token:read']));
    // A private application holds no application:read or proxy:read: svc has exactly its permissions, no more.
    expect(value.self).toMatchObject({ ok: false, status: 403 });
    expect(value.proxies).toMatchObject({ ok: false, status: 403 });
  });

  it("cannot read another tenant's resources", async () => {
    const a = await newTenant(t);
    const b = await newTenant(t);
    const aApp = await post(a, '/applications', { name: 'a-backend', type: 'private', permissions: ['proxy:invoke'] });
    const bApp = await post(b, '/applications', { name: 'b-backend', type: 'private', permissions: ['proxy:invoke'] });
    const bProxy = await post(b, '/proxies', { name: 'b', destination_url: 'https://b.example.com' });

    const key = await transformProxy(
      a,
      aApp.id,
      `const settle = (() => { ${outcome} })();
       return { app: await settle(req.svc.applications.get('${bApp.id}')), proxy: await settle(req.svc.proxies.get('${bProxy.id}')) };`,
    );
    const value = await run(key);
    expect(value.app.ok).toBe(false);
    expect(value.proxy.ok).toBe(false);

    // The bridge itself, bound to a management application of tenant A (which may read): B's resources are 404s.
    const bridge = t.app.get(SvcBridgeListener).bridgeFor({ tenantId: a.tenantId, applicationId: a.applicationId, modifiedBy: a.applicationId } as Proxy)!;
    expect(await bridge.request({ method: 'GET', path: `/applications/${aApp.id}` })).toMatchObject({ status: 200, body: { id: aApp.id } });
    expect(await bridge.request({ method: 'GET', path: `/applications/${bApp.id}` })).toMatchObject({ status: 404 });
    expect(await bridge.request({ method: 'GET', path: `/proxies/${bProxy.id}` })).toMatchObject({ status: 404 });
    const listed = await bridge.request({ method: 'GET', path: '/proxies', query: { id: [bProxy.id] } });
    expect(listed).toMatchObject({ status: 200, body: { data: [] } });
    const created = await bridge.request({ method: 'POST', path: '/proxies', body: { name: 'via svc', destination_url: 'https://a.example.com' } });
    expect(created).toMatchObject({ status: 201, body: { tenant_id: a.tenantId, created_by: a.applicationId } });
    const patched = await bridge.request({ method: 'PATCH', path: `/proxies/${(created.body as { id: string }).id}`, body: { name: 'patched via svc' } });
    expect(patched).toMatchObject({ status: 200, body: { name: 'patched via svc' } });
  });

  it('re-reads the application on every call: a deleted application is a 401 at once', async () => {
    const owner = await newTenant(t);
    const app = await post(owner, '/applications', { name: 'short-lived', type: 'private', permissions: ['proxy:invoke'] });
    const key = await transformProxy(owner, app.id, `const settle = (() => { ${outcome} })(); return settle(req.svc.request({ path: '/permissions' }));`);
    expect(await run(key)).toMatchObject({ ok: true });
    await t.http().delete(`/applications/${app.id}`).set('svc-api-key', owner.key).expect(204);
    expect(await run(key)).toMatchObject({ ok: false, status: 401 });
  });

  it('reaches nothing but this service: no /proxy, no absolute URLs, no other routes', async () => {
    const owner = await newTenant(t);
    const app = await post(owner, '/applications', { name: 'backend', type: 'private', permissions: ['proxy:invoke'] });
    const attempts = [
      `/proxy?svc-proxy-key=x`,
      '/PROXY/x',
      '//evil.example/x',
      '/health/live',
      '/docs',
      '/applications/../proxy',
      '/applications/%2e%2e/proxy',
      '/applications%2F..%2Fproxy',
    ];
    const key = await transformProxy(
      owner,
      app.id,
      `const settle = (() => { ${outcome} })();
       const out = [];
       for (const path of ${JSON.stringify(attempts)}) out.push(await settle(req.svc.request({ method: 'GET', path })));
       out.push(await settle(req.svc.request({ method: 'GET', path: '${upstream.origin}/' })));
       return out;`,
    );
    const value = await run(key);
    expect(value).toHaveLength(attempts.length + 1);
    // The refusal is the bridge's on purpose: the transform learns why (and nothing of the host).
    // Each is refused by the sandbox's client or by the bridge, and the transform learns why (nothing of the host).
    for (const result of value) expect(result).toMatchObject({ ok: false, message: expect.stringMatching(/svc/) });
    expect(value[0]).toMatchObject({ status: 400, message: expect.stringMatching(/failed: svc paths are paths of this service/) });
    for (const path of attempts) expect(() => checkedPath(path)).toThrow();
    expect(() => checkedPath('http://127.0.0.1/')).toThrow();
    expect(checkedPath('/applications/0b0b0b0b-0000-4000-8000-000000000000/regenerate')).toBe('/applications/0b0b0b0b-0000-4000-8000-000000000000/regenerate');
  });

  it('the internal listener admits nothing without its secret, and the secret counts nowhere else', async () => {
    const owner = await newTenant(t);
    const loopback = t.app.get(SvcBridgeListener) as unknown as { secret: Buffer; server: Server };
    const port = (loopback.server.address() as AddressInfo).port;
    const svcHeaders = {
      'x-gatehouse-svc-secret': loopback.secret.toString(),
      'x-gatehouse-svc-tenant': owner.tenantId,
      'x-gatehouse-svc-application': owner.applicationId,
      // The application that last wrote the proxy (here the same one), whose authority is checked again per call.
      'x-gatehouse-svc-writer': owner.applicationId,
    };
    // The public listener ignores the svc headers: without SVC-API-KEY it is a 401.
    await t.http().get('/applications').set(svcHeaders).expect(401);
    // The internal listener refuses a wrong secret, even beside a valid SVC-API-KEY.
    const wrong = await undiciRequest(`http://127.0.0.1:${port}/applications`, {
      headers: { ...svcHeaders, 'x-gatehouse-svc-secret': 'x'.repeat(43), 'svc-api-key': owner.key },
    });
    expect(wrong.statusCode).toBe(401);
    await wrong.body.dump();
    const right = await undiciRequest(`http://127.0.0.1:${port}/applications`, { headers: svcHeaders });
    expect(right.statusCode).toBe(200);
    await right.body.dump();
  });
});
