import request from 'supertest';
import { consoleListener } from '../../src/http/console-origin';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { newTenant } from '../support/application-fixtures';

jest.setTimeout(60_000);

/**
 * The console's listener (CONSOLE_PORT) in front of the whole API: the management API the console calls, never the data
 * plane or the API's documentation, everything sandboxed but the console's own pages (issue 22). The configured ports
 * are the defaults (API 3000, console 3001); the origins are the host the request names with those ports.
 */
describe("the console's origin (CONSOLE_PORT)", () => {
  let t: TestApp;
  let upstream: Upstream;
  let contacted = 0;
  let consoleSide: ReturnType<typeof consoleListener>;
  let openProxyKey: string;
  let key: string;

  beforeAll(async () => {
    upstream = await startUpstream((_req, res) => {
      contacted++;
      res.writeHead(200, { 'content-type': 'text/html', 'access-control-allow-origin': '*', 'access-control-allow-credentials': 'true' }).end('<p>tenant</p>');
    });
    t = await startTestApp({ PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8', REACTOR_POOL_SIZE: '1' });
    consoleSide = consoleListener(t.app.getHttpAdapter().getInstance());
    key = (await newTenant(t)).key;
    const created = await t
      .http()
      .post('/proxies')
      .set('svc-api-key', key)
      .send({ name: 'open', destination_url: `${upstream.origin}/`, require_auth: false });
    expect(created.status).toBe(201);
    openProxyKey = created.body.key;
  });
  afterAll(async () => {
    await t?.close();
    await upstream?.stop();
  });

  it('never serves /proxy, in any spelling, and never contacts the destination', async () => {
    for (const path of ['/proxy', '/proxy/page', '/PROXY/page', '/Proxy', `/proxy?svc-proxy-key=${openProxyKey}`]) {
      for (const method of ['get', 'post', 'options'] as const) {
        const res = await request(consoleSide)[method](path).set('svc-proxy-key', openProxyKey);
        expect([path, method, res.status]).toEqual([path, method, 404]);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.headers['content-security-policy']).toMatch(/^sandbox; default-src 'none'/);
      }
    }
    expect(contacted).toBe(0);
    // The same proxy on the API's port: served, so the refusal above is the listener's.
    await request(t.app.getHttpServer()).get(`/proxy?svc-proxy-key=${openProxyKey}`).expect(200);
    expect(contacted).toBe(1);
  });

  it("serves no API documentation (a third party's page that runs scripts)", async () => {
    for (const path of ['/docs', '/docs/', '/docs/swagger-ui-init.js', '/openapi.json', '/openapi.yaml']) {
      const res = await request(consoleSide).get(path);
      expect([path, res.status]).toEqual([path, 404]);
    }
    await request(t.app.getHttpServer()).get('/openapi.json').expect(200);
  });

  it('serves the management API the console calls, JSON under a sandboxing policy, nosniff, unframeable', async () => {
    const res = await request(consoleSide).get('/applications/key').set('svc-api-key', key).expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['content-security-policy']).toBe("sandbox; default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    // Errors too (a path is echoed nowhere a browser would run it).
    const missing = await request(consoleSide).get('/nowhere/<script>alert(1)</script>').expect(404);
    expect(missing.headers['content-security-policy']).toMatch(/^sandbox;/);
  });

  it("answers nothing on the API's port that a browser would sniff into a page", async () => {
    const res = await request(t.app.getHttpServer()).get('/nowhere/<script>alert(1)</script>').expect(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it("sends the API port's /console to the console's origin", async () => {
    const res = await request(t.app.getHttpServer()).get('/console/proxies?x=1').set('host', 'gatehouse.test:3000').expect(302);
    expect(res.headers.location).toBe('http://gatehouse.test:3001/console/proxies?x=1');
  });

  it("shares /proxy responses with the console's origin alone (its Try the proxy), whatever the destination allowed", async () => {
    const api = () => request(t.app.getHttpServer());
    const preflight = await api()
      .options('/proxy/x')
      .set('host', 'gatehouse.test:3000')
      .set('origin', 'http://gatehouse.test:3001')
      .set('access-control-request-method', 'POST')
      .set('access-control-request-headers', 'svc-proxy-key, content-type')
      .expect(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('http://gatehouse.test:3001');
    expect(preflight.headers['access-control-allow-headers']).toContain('svc-proxy-key');
    const shared = await api()
      .get('/proxy')
      .set('host', 'gatehouse.test:3000')
      .set('origin', 'http://gatehouse.test:3001')
      .set('svc-proxy-key', openProxyKey)
      .expect(200);
    expect(shared.headers['access-control-allow-origin']).toBe('http://gatehouse.test:3001');
    expect(shared.headers['access-control-allow-credentials']).toBeUndefined();
    expect(shared.headers.vary).toMatch(/Origin/);

    // Another origin: no preflight answered (OPTIONS is no proxy method), the destination's own CORS as it sent it.
    await api()
      .options('/proxy/x')
      .set('host', 'gatehouse.test:3000')
      .set('origin', 'http://evil.test:3001')
      .set('access-control-request-method', 'POST')
      .expect(405);
    const other = await api()
      .get('/proxy')
      .set('host', 'gatehouse.test:3000')
      .set('origin', 'http://evil.test:3001')
      .set('svc-proxy-key', openProxyKey)
      .expect(200);
    expect(other.headers['access-control-allow-origin']).toBe('*');
  });
});
