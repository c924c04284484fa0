import { Registry } from 'prom-client';
import { captureLog, CapturedLog } from '@gatehouse/test-support/log-capture';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { registerApiMetrics } from '../../src/observability/api-metrics';

jest.setTimeout(30_000);

const SECRET = 'outbound-secret-3f9a';

/**
 * A transform's own requests through /proxy: made under the service's destination policy, counted in the access-log
 * line of the proxied request (count and time, never a URL, a body or a secret) and in the metrics by outcome.
 */
describe('/proxy: outbound requests of transforms', () => {
  let t: TestApp;
  let strict: TestApp;
  let log: CapturedLog;
  let upstream: Upstream;
  let registry: Registry;
  let key: string;

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ path: req.url, token: 'tok-from-upstream' }));
      });
    });
    log = captureLog('info');
    [t, strict] = await Promise.all([
      startTestApp({ PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8', REACTOR_POOL_SIZE: '1' }, { accessLog: log.root }),
      startTestApp({ PROXY_ALLOW_HTTP: 'true', REACTOR_POOL_SIZE: '1' }),
    ]);
    registry = new Registry();
    registerApiMetrics(registry, t.app, false);
    const tenant = await t.tenant();
    const code = `module.exports = async (req) => {
      const auth = await (await fetch(req.configuration.AUTH_URL + '/oauth?secret=' + req.configuration.SECRET, { method: 'POST', body: 'grant=${SECRET}' })).json();
      return { body: { ...req.args.body, token: auth.token }, headers: { 'content-type': 'application/json' } };
    };`;
    const created = await t
      .http()
      .post('/proxies')
      .set('svc-api-key', tenant.key)
      .send({
        name: 'outbound',
        destination_url: `${upstream.origin}/`,
        require_auth: false,
        request_transform: { code },
        configuration: { AUTH_URL: upstream.origin, SECRET },
      });
    expect(created.status).toBe(201);
    key = created.body.key;
  });
  afterAll(async () => {
    await Promise.all([t?.close(), strict?.close()]);
    await upstream?.stop();
  });

  it('the request transform fetches; the access line counts it, without URL or secret; the metrics count it by outcome', async () => {
    const res = await t.http().post('/proxy/pay').set('svc-proxy-key', key).send({ amount: 1 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ path: '/pay', token: 'tok-from-upstream' });
    let line: Record<string, any> | undefined;
    for (let i = 0; i < 100 && !line; i++) {
      line = log.lines().find((l) => l.kind === 'access' && l.request_id === res.headers['x-request-id']);
      if (!line) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(line).toMatchObject({ route: '/proxy/*', status: 200, outbound_requests: 1, outbound_ms: expect.any(Number) });
    expect(JSON.stringify(line)).not.toMatch(new RegExp(`${SECRET}|oauth|tok-from-upstream`));
    const metrics = await registry.getSingleMetricAsString('gatehouse_transform_outbound_request_duration_seconds');
    expect(metrics).toMatch(/gatehouse_transform_outbound_request_duration_seconds_count\{outcome="ok"\} [1-9]/);
    expect(metrics).not.toMatch(/oauth|127\.0\.0\.1/);
  });

  it('where the operator allows no private range, the same transform is refused its loopback request (500 from the transform)', async () => {
    const tenant = await strict.tenant();
    const code = `module.exports = async (req) => { await fetch(req.configuration.URL); return { body: 'reached' }; };`;
    const created = await strict
      .http()
      .post('/proxies')
      .set('svc-api-key', tenant.key)
      .send({
        name: 'refused',
        destination_url: 'https://example.com/',
        require_auth: false,
        request_transform: { code },
        configuration: { URL: `${upstream.origin}/x` },
      });
    expect(created.status).toBe(201);
    const before = upstream.connections();
    const res = await strict.http().post('/proxy').set('svc-proxy-key', created.body.key).send({});
    expect(res.status).toBe(500);
    expect(res.body.proxy_error.detail).toMatch(/fetch failed/);
    expect(upstream.connections()).toBe(before);
  });
});
