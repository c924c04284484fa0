import { randomBytes } from 'node:crypto';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPassThroughProxy, startServiceProcess, WORKER_MAIN } from '../../../test/support/service-process';
import { startTestApp } from '../../../test/support/test-app';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../../../test/support/test-env';
import { startUpstream, Upstream } from '../../../test/support/upstream';
import { as, newTenant } from './application-fixtures';

jest.setTimeout(90_000);

interface ExportedSpan {
  service: string;
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

/** A local OTLP/HTTP (JSON) collector: what the SDK exports to `${endpoint}/v1/traces`. */
async function startCollector(): Promise<{ endpoint: string; spans: ExportedSpan[]; server: Server }> {
  const spans: ExportedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces' && String(req.headers['content-type']).startsWith('application/json')) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const resourceSpans of body.resourceSpans ?? []) {
          const service = resourceSpans.resource?.attributes?.find((a: any) => a.key === 'service.name')?.value?.stringValue;
          for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
            for (const span of scopeSpans.spans ?? []) {
              const attributes: Record<string, unknown> = {};
              for (const a of span.attributes ?? []) attributes[a.key] = Object.values(a.value ?? {})[0];
              spans.push({ service, scope: scopeSpans.scope?.name, traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId || undefined, name: span.name, kind: span.kind, attributes });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, server };
}

async function eventually<T>(find: () => T | undefined, what: string, all: () => unknown): Promise<T> {
  for (let i = 0; i < 150; i++) {
    const found = find();
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`never saw ${what}; got:\n${JSON.stringify(all(), null, 1).slice(0, 4000)}`);
}

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;

describe('tracing', () => {
  let upstream: Upstream;
  let seen: IncomingHttpHeaders[];

  beforeAll(async () => {
    seen = [];
    upstream = await startUpstream((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
  });
  afterAll(() => upstream?.stop());

  it('without OTEL_EXPORTER_OTLP_ENDPOINT, passes the caller\'s traceparent and the request id to the destination, even past a transform', async () => {
    const t = await startTestApp({ PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8', REACTOR_POOL_SIZE: '1' });
    try {
      const admin = await newTenant(t);
      // The transform forwards no header at all.
      const created = await as(t, admin.key).post('/proxies', {
        name: 'traced',
        destination_url: upstream.origin,
        require_auth: false,
        request_transform: { code: 'module.exports = async (req) => ({ body: req.args.body, headers: {} });' },
      });
      const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      const res = await t.http().post('/proxy').set('svc-proxy-key', created.body.key).set('traceparent', traceparent).set('tracestate', 'vendor=x').send({ a: 1 });
      expect(res.status).toBe(200);
      const headers = seen.at(-1)!;
      expect(headers.traceparent).toBe(traceparent);
      expect(headers.tracestate).toBe('vendor=x');
      expect(headers['x-request-id']).toBe(res.headers['x-request-id']);

      const plain = await t.http().get('/proxy').set('svc-proxy-key', created.body.key).set('x-request-id', 'caller-chosen-id');
      expect(plain.status).toBe(200);
      expect(seen.at(-1)!['x-request-id']).toBe('caller-chosen-id');
      expect(seen.at(-1)!.traceparent).toBeUndefined();
    } finally {
      await t.close();
    }
  });

  it('with OTEL_EXPORTER_OTLP_ENDPOINT, exports the HTTP server, transform, destination, database, Redis and job spans of one trace', async () => {
    const collector = await startCollector();
    const env = {
      DATABASE_URL: TEST_DATABASE_URL,
      REDIS_URL: TEST_REDIS_URL,
      QUEUE_PREFIX: `tracing-${randomBytes(4).toString('hex')}`,
      PROXY_ALLOW_HTTP: 'true',
      PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
      REACTOR_POOL_SIZE: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    const admin = await startTestApp();
    const { key } = await admin.tenant();
    await admin.close();
    const worker = await startServiceProcess(env, [], WORKER_MAIN, /"msg":"gatehouse worker running"/);
    const api = await startServiceProcess(env, ['--api-only']);
    const spans = collector.spans;
    try {
      const proxyKey = await createPassThroughProxy(api, key, upstream.origin);

      const traceId = randomBytes(16).toString('hex');
      const callerSpan = randomBytes(8).toString('hex');
      const res = await fetch(`${api.baseUrl}/proxy/items`, {
        method: 'POST',
        headers: { 'svc-proxy-key': proxyKey, 'content-type': 'application/json', traceparent: `00-${traceId}-${callerSpan}-01` },
        body: '{"n":1}',
      });
      expect(res.status).toBe(200);

      const server = await eventually(() => spans.find((s) => s.traceId === traceId && s.kind === SPAN_KIND_SERVER), 'the server span', () => spans);
      expect(server).toMatchObject({ service: 'gatehouse-api', name: 'POST /proxy/*', parentSpanId: callerSpan });
      expect(server.attributes).toMatchObject({ 'http.route': '/proxy/*', 'http.response.status_code': 200, 'gatehouse.request_id': res.headers.get('x-request-id') });
      const transform = await eventually(() => spans.find((s) => s.traceId === traceId && s.name === 'transform request'), 'the transform span', () => spans);
      expect(transform.parentSpanId).toBe(server.spanId);
      const destination = await eventually(() => spans.find((s) => s.traceId === traceId && s.name === 'proxy destination'), 'the destination span', () => spans);
      expect(destination).toMatchObject({ kind: SPAN_KIND_CLIENT, parentSpanId: server.spanId });
      // The destination sees the trace, as a child of this service's destination span, and the request id.
      expect(seen.at(-1)!.traceparent).toBe(`00-${traceId}-${destination.spanId}-01`);
      expect(seen.at(-1)!['x-request-id']).toBe(res.headers.get('x-request-id'));

      // The proxy's creation: its server span, its SQL (pg) and its cache-version traffic (Redis) nested in it.
      const create = await eventually(() => spans.find((s) => s.name === 'POST /proxies'), 'the POST /proxies span', () => spans);
      await eventually(() => spans.find((s) => s.traceId === create.traceId && s.scope.includes('instrumentation-pg')), 'a pg span', () => spans);
      await eventually(() => spans.find((s) => s.traceId === create.traceId && s.scope.includes('instrumentation-ioredis')), 'an ioredis span', () => spans);
      // The worker's job writing the audit log of that creation, with its own SQL inside.
      const job = await eventually(() => spans.find((s) => s.service === 'gatehouse-worker' && s.name.startsWith('job audit-log')), 'a job span', () => spans);
      await eventually(() => spans.find((s) => s.traceId === job.traceId && s.scope.includes('instrumentation-pg')), "a pg span in the job's trace", () => spans);
    } finally {
      expect(await api.stop()).toBe(0);
      expect(await worker.stop()).toBe(0);
      collector.server.closeAllConnections();
      await new Promise((resolve) => collector.server.close(resolve));
    }
  });
});
