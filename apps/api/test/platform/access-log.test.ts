import { captureLog, CapturedLog } from '@gatehouse/test-support/log-capture';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { as, Caller, newTenant } from '../support/application-fixtures';

jest.setTimeout(30_000);

const CONFIG_SECRET = 'cfg-secret-6c1f0e2a';
const CARD = '4111111111111111';

/** One JSON access-log line per request, with identifiers, statuses and timings, and no secret. */
describe('access log', () => {
  let t: TestApp;
  let log: CapturedLog;
  let upstream: Upstream;
  let admin: Caller;

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(req.url?.startsWith('/teapot') ? 418 : 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ card: CARD }));
      });
    });
    log = captureLog('info');
    t = await startTestApp({ PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8', REACTOR_POOL_SIZE: '1' }, { accessLog: log.root });
    admin = await newTenant(t);
  });
  afterAll(async () => {
    await t?.close();
    await upstream?.stop();
  });

  /** The access line of one request (the line is written when the response closes, just after the client has it). */
  async function accessLine(requestId: string): Promise<Record<string, any>> {
    for (let i = 0; i < 100; i++) {
      const line = log.lines().find((l) => l.kind === 'access' && l.request_id === requestId);
      if (line) return line;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no access line for ${requestId} in:\n${log.text()}`);
  }

  it('logs a successful API call with its route template, status, duration, tenant and application', async () => {
    const created = await as(t, admin.key).post('/applications', { name: `named-${CARD}`, type: 'management', permissions: ['proxy:read'] });
    expect(created.status).toBe(201);
    const res = await as(t, admin.key).get(`/applications/${created.body.id}`);
    expect(res.status).toBe(200);

    const line = await accessLine(res.headers['x-request-id']);
    expect(line).toMatchObject({
      level: 'info',
      msg: 'request',
      method: 'GET',
      route: '/applications/:id',
      status: 200,
      tenant_id: admin.tenantId,
      application_id: admin.applicationId,
    });
    expect(typeof line.duration_ms).toBe('number');
    expect(line.duration_ms).toBeGreaterThan(0);
    expect(line).not.toHaveProperty('error');
    expect(line.client_address).toMatch(/127\.0\.0\.1/);

    const createLine = await accessLine(created.headers['x-request-id']);
    expect(createLine).toMatchObject({ method: 'POST', route: '/applications', status: 201 });
    // Neither the body (the name) nor the key is logged, nor the created application's key.
    expect(log.text()).not.toContain(CARD);
    expect(log.text()).not.toContain(admin.key);
    expect(log.text()).not.toContain(created.body.key);
  });

  it('logs failed authentications and refused requests with the reason, never the key offered', async () => {
    const wrongKey = `key_${'x'.repeat(40)}`;
    const unauthenticated = await as(t, wrongKey).get('/applications');
    expect(unauthenticated.status).toBe(401);
    expect(await accessLine(unauthenticated.headers['x-request-id'])).toMatchObject({
      route: '/applications',
      status: 401,
      error: 'unauthenticated',
    });

    const weak = await as(t, admin.key).post('/applications', { name: 'reader', type: 'management', permissions: ['proxy:read'] });
    const forbidden = await as(t, weak.body.key).get('/logs');
    expect(forbidden.status).toBe(403);
    expect(await accessLine(forbidden.headers['x-request-id'])).toMatchObject({
      route: '/logs',
      status: 403,
      error: 'forbidden',
      tenant_id: admin.tenantId,
      application_id: weak.body.id,
    });

    const badJson = await t.http().post('/applications').set('svc-api-key', admin.key).set('content-type', 'application/json').send(`{"name":"${CARD}"`);
    expect(badJson.status).toBe(400);
    expect(await accessLine(badJson.headers['x-request-id'])).toMatchObject({ method: 'POST', status: 400 });

    const unmatched = await t.http().get(`/nowhere/${CARD}`);
    expect(unmatched.status).toBe(404);
    expect(await accessLine(unmatched.headers['x-request-id'])).toMatchObject({ route: 'unmatched', status: 404 });

    expect(log.text()).not.toContain(wrongKey);
    expect(log.text()).not.toContain(weak.body.key);
    expect(log.text()).not.toContain(CARD);
  });

  it('logs /proxy calls with the proxy, the destination status and the time in transforms, never a key or configuration', async () => {
    const created = await as(t, admin.key).post('/proxies', {
      name: 'logged',
      destination_url: upstream.origin,
      require_auth: false,
      configuration: { token: CONFIG_SECRET },
      request_transform: {
        code: 'module.exports = async (req) => ({ body: req.args.body, headers: { ...req.args.headers, "x-token": req.configuration.token } });',
      },
      response_transform: { code: 'module.exports = async (res) => ({ status: res.args.status, body: { seen: true } });' },
    });
    expect(created.status).toBe(201);
    const proxyKey: string = created.body.key;

    // The key in the query string: the logged route is the template, not the URL.
    const res = await t.http().post(`/proxy/teapot/${CARD}?svc-proxy-key=${proxyKey}&q=${CARD}`).send({ card: CARD });
    expect(res.status).toBe(418);
    const line = await accessLine(res.headers['x-request-id']);
    expect(line).toMatchObject({
      method: 'POST',
      route: '/proxy/*',
      status: 418,
      proxy_id: created.body.id,
      tenant_id: admin.tenantId,
      destination_status: 418,
    });
    expect(line.transform_ms).toBeGreaterThan(0);

    const unknown = await t
      .http()
      .get('/proxy')
      .set('svc-proxy-key', `${proxyKey.slice(0, -4)}zzzz`);
    expect(unknown.status).toBe(404);
    expect(await accessLine(unknown.headers['x-request-id'])).toMatchObject({ route: '/proxy', status: 404, error: 'not_found' });

    const text = log.text();
    expect(text).not.toContain(proxyKey);
    expect(text).not.toContain(proxyKey.slice(0, -4));
    expect(text).not.toContain(CONFIG_SECRET);
    expect(text).not.toContain(CARD);
  });

  it('logs an unreachable destination with its reason', async () => {
    const created = await as(t, admin.key).post('/proxies', { name: 'down', destination_url: 'http://127.0.0.1:1', require_auth: false });
    const res = await t.http().get('/proxy').set('svc-proxy-key', created.body.key);
    expect(res.status).toBe(502);
    expect(await accessLine(res.headers['x-request-id'])).toMatchObject({
      route: '/proxy',
      status: 502,
      proxy_id: created.body.id,
      error: 'destination_unreachable',
    });
  });
});
