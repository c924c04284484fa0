import { request as httpRequest, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { as, Caller, CONTAINER_RULE, createApplication, newTenant, rowCounts } from '../support/application-fixtures';

/** The app, tenant, target application and proxy that strict-input*.test.ts share, and the raw requests they send. */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: Record<string, unknown> & { errors?: Record<string, string[]> };
}

export const PATCH_TYPE = 'application/merge-patch+json';

export function useStrictInput() {
  let t: TestApp;
  let base: string;
  let admin: Caller;
  let upstream: Upstream;
  let app: { id: string };
  let proxy: { id: string; key: string };

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"upstream":true}');
    });
    t = await startTestApp({ PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8', REACTOR_POOL_SIZE: '1' });
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    admin = await newTenant(t);
    app = await createApplication(t, admin.key, { name: 'target', type: 'private', permissions: ['token:read'], rules: [CONTAINER_RULE] });
    const created = await as(t, admin.key).post('/proxies', { name: 'target', destination_url: `${upstream.origin}/`, configuration: { a: 'b' } });
    proxy = { id: created.body.id, key: created.body.key };
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await upstream?.stop();
  });

  /** One request with exactly these bytes and headers (supertest would re-encode a body). */
  function send(method: string, path: string, options: { body?: Buffer | string; type?: string; headers?: Record<string, string> } = {}): Promise<Reply> {
    const body = options.body === undefined ? undefined : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body);
    const headers: Record<string, string> = { 'svc-api-key': admin.key, ...options.headers };
    if (body) {
      headers['content-type'] = options.type ?? (method === 'PATCH' ? PATCH_TYPE : 'application/json');
      if (headers['transfer-encoding'] === undefined) headers['content-length'] = String(body.length);
    }
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${base}${path}`, { method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: Reply['body'] = {};
          try {
            parsed = text ? JSON.parse(text) : {};
          } catch {
            // left empty: the assertion on the status says what happened
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed });
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  async function snapshot() {
    return {
      rows: await rowCounts(t, admin.tenantId),
      proxies: (await t.database.dataSource.query('SELECT count(*)::int AS n FROM proxies WHERE tenant_id = $1', [admin.tenantId]))[0].n,
      app: (await as(t, admin.key).get(`/applications/${app.id}`).expect(200)).body,
      proxy: (await as(t, admin.key).get(`/proxies/${proxy.id}`).expect(200)).body,
    };
  }

  /** The status, a ProblemDetails body naming `fields`, and nothing written or changed. */
  async function expectRefused(status: number, request: () => Promise<Reply>, fields: string[] = []): Promise<Reply> {
    const before = await snapshot();
    const reply = await request();
    if (reply.status !== status) throw new Error(`expected ${status}, got ${reply.status}: ${reply.text.slice(0, 500)}`);
    expect(reply.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(reply.body).toMatchObject({ status, type: expect.any(String), title: expect.any(String) });
    for (const field of fields) expect(Object.keys(reply.body.errors ?? {})).toContain(field);
    expect(await snapshot()).toEqual(before);
    return reply;
  }

  // Every endpoint that takes a body, with a valid body for it: tests break one thing at a time.
  const validApplication = '{"name":"n","type":"private","permissions":["token:read"]}';
  const validApplicationUpdate = '{"name":"n","permissions":["token:read"]}';
  const validProxy = () => `{"name":"n","destination_url":"${upstream.origin}/"}`;
  const BODY_ENDPOINTS: [string, string, () => string, () => string][] = [
    ['POST /applications', 'POST', () => '/applications', () => validApplication],
    ['PUT /applications/{id}', 'PUT', () => `/applications/${app.id}`, () => validApplicationUpdate],
    ['POST /proxies', 'POST', () => '/proxies', validProxy],
    ['PUT /proxies/{id}', 'PUT', () => `/proxies/${proxy.id}`, validProxy],
    ['PATCH /proxies/{id}', 'PATCH', () => `/proxies/${proxy.id}`, () => '{"name":"n"}'],
  ];
  return {
    get t() {
      return t;
    },
    get base() {
      return base;
    },
    get admin() {
      return admin;
    },
    get upstream() {
      return upstream;
    },
    get app() {
      return app;
    },
    get proxy() {
      return proxy;
    },
    send,
    expectRefused,
    validApplication,
    validProxy,
    BODY_ENDPOINTS,
  };
}
