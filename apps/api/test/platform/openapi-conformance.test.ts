import { randomUUID } from 'node:crypto';
import { LogChainWriter } from '@gatehouse/domain';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { as, Caller, managementWith, newTenant } from '../support/application-fixtures';
import { Json, openApiChecker } from '../support/openapi-document';

/**
 * The committed OpenAPI document describes what the API really does: every response met below (successes and errors,
 * the data plane included) has its status documented for its operation and validates against that response's schema
 * (ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses), and every request example in the document validates against its
 * schema and is accepted by the API.
 */
describe('the OpenAPI document against the real API', () => {
  const { document, ajv, validatorAt, conforms, checked } = openApiChecker();

  let t: TestApp;
  let admin: Caller;
  let upstream: Upstream;
  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.url?.startsWith('/missing')) {
        res.writeHead(404, { 'content-type': 'text/html' });
        res.end('<h1>not here</h1>');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('from the destination');
    });
    t = await startTestApp({
      PROXY_ALLOW_HTTP: 'true',
      PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
      REACTOR_POOL_SIZE: '1',
      BODY_LIMIT_BYTES: '4096',
      REACTOR_TIMEOUT_MS: '1000',
    });
    admin = await newTenant(t);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await upstream?.stop();
  });

  /** Every request example of an operation: valid against its schema, and accepted by the API. */
  function examplesOf(path: string, method: string): [string, Json][] {
    const content = document.paths[path][method].requestBody.content;
    const [media] = Object.keys(content);
    const examples = Object.entries(content[media!].examples ?? {}) as [string, Json][];
    expect(examples.length).toBeGreaterThan(0);
    const validate = validatorAt(['paths', path, method, 'requestBody', 'content', media!, 'schema']);
    for (const [name, example] of examples) {
      if (!validate(example.value)) throw new Error(`example ${name} of ${method} ${path}: ${ajv.errorsText(validate.errors)}`);
    }
    return examples;
  }

  /** Each request example of POST `path` sent: a 201 as documented; the ids created, in the examples' order. */
  async function createExamples(api: ReturnType<typeof as>, path: string): Promise<string[]> {
    const ids: string[] = [];
    for (const [, example] of examplesOf(path, 'post')) {
      const res = await api.post(path, example.value);
      expect(res.status).toBe(201);
      conforms('post', path, res);
      ids.push(res.body.id);
    }
    return ids;
  }

  it('applications: request examples accepted, every response as documented', async () => {
    const api = as(t, admin.key);
    const created = await createExamples(api, '/applications');
    const id = created[0]!;
    for (const [, example] of examplesOf('/applications/{id}', 'put')) {
      const res = await api.put(`/applications/${id}`, example.value);
      expect(res.status).toBe(200);
      conforms('put', '/applications/{id}', res);
    }
    conforms('get', '/applications', await api.get('/applications?size=2').expect(200));
    conforms('get', '/applications', await api.get(`/applications?type=private&id=${id}`).expect(200));
    const first = await api.get('/applications?size=1').expect(200);
    conforms('get', '/applications', await api.get(`/applications?size=1&start=${first.body.pagination.next}`).expect(200));
    conforms('get', '/applications/{id}', await api.get(`/applications/${id}`).expect(200));
    conforms('get', '/applications/key', await api.get('/applications/key').expect(200));
    conforms('post', '/applications/{id}/regenerate', await api.post(`/applications/${id}/regenerate`).expect(200));
    conforms('delete', '/applications/{id}', await api.delete(`/applications/${id}`).expect(204));

    // Errors
    conforms('post', '/applications', await api.post('/applications', { name: 'x', type: 'nope', extra: 1 }).expect(400));
    conforms('get', '/applications', await api.get('/applications?size=0x10').expect(400));
    conforms('get', '/applications', await t.http().get('/applications').expect(401));
    const weak = await managementWith(t, admin, ['log:read']);
    conforms('get', '/applications', await as(t, weak.key).get('/applications').expect(403));
    conforms('get', '/applications/{id}', await api.get(`/applications/${id}`).expect(404));
    conforms('put', '/applications/{id}', await api.put(`/applications/${randomUUID()}`, { name: 'x', permissions: ['token:read'] }).expect(404));
    conforms('post', '/applications', await api.post('/applications').set('content-type', 'text/plain').send('x'.repeat(10)).expect(415));
    conforms('post', '/applications', await api.post('/applications', { name: 'x'.repeat(5000), type: 'private' }).expect(413));
  });

  it('proxies: request examples accepted, every response as documented', async () => {
    const api = as(t, admin.key);
    const ids = await createExamples(api, '/proxies');
    const id = ids[1]!;
    for (const [, example] of examplesOf('/proxies/{id}', 'put')) conforms('put', '/proxies/{id}', await api.put(`/proxies/${id}`, example.value).expect(200));
    for (const [, example] of examplesOf('/proxies/{id}', 'patch')) {
      const res = await t
        .http()
        .patch(`/proxies/${id}`)
        .set('svc-api-key', admin.key)
        .set('content-type', 'application/merge-patch+json')
        .send(JSON.stringify(example.value));
      expect(res.status).toBe(200);
      conforms('patch', '/proxies/{id}', res);
    }
    conforms('get', '/proxies', await api.get('/proxies?name=pay*').expect(200));
    conforms('get', '/proxies/{id}', await api.get(`/proxies/${id}`).expect(200));
    conforms('delete', '/proxies/{id}', await api.delete(`/proxies/${ids[0]}`).expect(204));

    conforms('post', '/proxies', await api.post('/proxies', { name: 'x', destination_url: 'ftp://x', require_auth: 'yes' }).expect(400));
    conforms(
      'patch',
      '/proxies/{id}',
      await t.http().patch(`/proxies/${id}`).set('svc-api-key', admin.key).set('content-type', 'application/json').send('{}').expect(415),
    );
    conforms('delete', '/proxies/{id}', await api.delete(`/proxies/${ids[0]}`).expect(404));
    conforms('get', '/proxies/{id}', await api.get('/proxies/not-a-uuid').expect(400));
  });

  it('logs, permissions and health answer as documented', async () => {
    await t.app.get(LogChainWriter).append([
      {
        id: randomUUID(),
        tenantId: admin.tenantId,
        actorId: admin.applicationId,
        actorType: 'application',
        entityType: 'proxy',
        entityId: randomUUID(),
        operation: 'create',
        message: "Proxy 'p' created",
        createdAt: new Date(),
      },
      {
        id: randomUUID(),
        tenantId: admin.tenantId,
        actorId: null,
        actorType: 'system',
        entityType: 'application',
        entityId: randomUUID(),
        operation: 'delete',
        message: 'Application expired',
        createdAt: new Date(),
      },
    ]);
    const api = as(t, admin.key);
    const logs = await api.get('/logs').expect(200);
    expect(logs.body.data.length).toBe(2);
    conforms('get', '/logs', logs);
    conforms('get', '/logs', await api.get('/logs?start_date=yesterday').expect(400));
    conforms('get', '/logs/entity-types', await api.get('/logs/entity-types').expect(200));
    conforms('get', '/permissions', await api.get('/permissions?application_type=private').expect(200));
    conforms('get', '/permissions', await api.get('/permissions?application_type=root').expect(400));
    conforms('get', '/health/live', await t.http().get('/health/live').expect(200));
    conforms('get', '/health/ready', await t.http().get('/health/ready').expect(200));
  });

  it('the /proxy data plane answers as documented', async () => {
    const api = as(t, admin.key);
    const open = (await api.post('/proxies', { name: 'open', destination_url: `${upstream.origin}/`, require_auth: false }).expect(201)).body;
    const guarded = (await api.post('/proxies', { name: 'guarded', destination_url: `${upstream.origin}/` }).expect(201)).body;
    const throwing = (
      await api
        .post('/proxies', {
          name: 'throws',
          destination_url: `${upstream.origin}/`,
          require_auth: false,
          request_transform: { code: "module.exports = async () => { throw new Error('no'); };" },
        })
        .expect(201)
    ).body;
    const unreachable = (await api.post('/proxies', { name: 'down', destination_url: 'http://127.0.0.1:1/', require_auth: false }).expect(201)).body;

    conforms('get', '/proxy/{path}', await t.http().get('/proxy/a/b').set('svc-proxy-key', open.key).expect(200));
    conforms('post', '/proxy', await t.http().post(`/proxy?svc-proxy-key=${open.key}`).send({ a: 1 }).expect(200));
    conforms('get', '/proxy', await t.http().get('/proxy').set('svc-proxy-key', guarded.key).expect(401));
    conforms('get', '/proxy', await t.http().get('/proxy').set('svc-proxy-key', 'A'.repeat(32)).expect(404));
    conforms('post', '/proxy', await t.http().post('/proxy').set('svc-proxy-key', throwing.key).send({ a: 1 }).expect(500));
    conforms('get', '/proxy', await t.http().get('/proxy').set('svc-proxy-key', unreachable.key).expect(502));
    conforms('put', '/proxy', await t.http().put('/proxy').set('svc-proxy-key', open.key).set('content-type', 'text/plain').send('x'.repeat(8000)).expect(413));
    // The destination's own 404 (HTML) is documented too, as what the destination answered.
    conforms('get', '/proxy/{path}', await t.http().get('/proxy/missing').set('svc-proxy-key', open.key).expect(404));

    // Every proxy_error body a transform can cause is a ProxyError.
    const proxyError = validatorAt(['components', 'schemas', 'ProxyError']);
    const thrown = async (code: string, status: number, method: 'get' | 'post' = 'post') => {
      const proxy = (
        await api.post('/proxies', { name: `t${status}`, destination_url: `${upstream.origin}/`, require_auth: false, request_transform: { code } }).expect(201)
      ).body;
      const res = await t.http()[method]('/proxy').set('svc-proxy-key', proxy.key).expect(status);
      conforms(method, '/proxy', res);
      if (!proxyError(res.body)) throw new Error(`${status}: ${ajv.errorsText(proxyError.errors)} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    expect(await thrown("module.exports = async () => { throw new Error('no'); };", 500)).toMatchObject({ proxy_error: { status: 500, detail: 'no' } });
    await thrown("module.exports = async () => { throw new AuthenticationError('MY-CUSTOM-API-KEY header is required'); };", 401, 'get');
    await thrown('module.exports = async () => { throw new InvalidPaymentMethodError({ card: "expired" }); };', 402);
    await thrown('module.exports = async () => { throw new UnprocessableEntityError(); };', 422);
    await thrown('module.exports = async () => { for (;;) {} };', 500);
  });

  afterAll(() => {
    // What the tour above covered, for whoever extends the document.
    expect(checked.size).toBeGreaterThanOrEqual(35);
  });
});
