import { randomBytes } from 'node:crypto';
import { IncomingHttpHeaders } from 'node:http';
import { Queue } from 'bullmq';
import { eventually, startCollector } from '@gatehouse/test-support/otlp-collector';
import { createPassThroughProxy, startServiceProcess, WORKER_MAIN } from '@gatehouse/test-support/service-process';
import { startTestApp } from '@gatehouse/test-support/test-app';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '@gatehouse/test-support/test-env';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { as, newTenant } from '../support/application-fixtures';

jest.setTimeout(90_000);

/** The built service against the test database, exporting spans at once to `endpoint`. */
function tracedEnv(endpoint: string): Record<string, string> {
  return {
    DATABASE_URL: TEST_DATABASE_URL,
    PROXY_ALLOW_HTTP: 'true',
    PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
    REACTOR_POOL_SIZE: '1',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
}

/** A tenant and its management key, made in the test database before the service starts. */
async function newTenantKey() {
  const admin = await startTestApp();
  try {
    return await admin.tenant();
  } finally {
    await admin.close();
  }
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

  it("without OTEL_EXPORTER_OTLP_ENDPOINT, passes the caller's traceparent and the request id to the destination, even past a transform", async () => {
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
      const res = await t
        .http()
        .post('/proxy')
        .set('svc-proxy-key', created.body.key)
        .set('traceparent', traceparent)
        .set('tracestate', 'vendor=x')
        .send({ a: 1 });
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
    const env = { ...tracedEnv(collector.endpoint), REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: `tracing-${randomBytes(4).toString('hex')}` };
    const { key, tenant } = await newTenantKey();
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

      const server = await eventually(
        () => spans.find((s) => s.traceId === traceId && s.kind === SPAN_KIND_SERVER),
        'the server span',
        () => spans,
      );
      expect(server).toMatchObject({ service: 'gatehouse-api', name: 'POST /proxy/*', parentSpanId: callerSpan });
      expect(server.attributes).toMatchObject({
        'http.route': '/proxy/*',
        'http.response.status_code': 200,
        'gatehouse.request_id': res.headers.get('x-request-id'),
      });
      const transform = await eventually(
        () => spans.find((s) => s.traceId === traceId && s.name === 'transform request'),
        'the transform span',
        () => spans,
      );
      expect(transform.parentSpanId).toBe(server.spanId);
      const destination = await eventually(
        () => spans.find((s) => s.traceId === traceId && s.name === 'proxy destination'),
        'the destination span',
        () => spans,
      );
      expect(destination).toMatchObject({ kind: SPAN_KIND_CLIENT, parentSpanId: server.spanId });
      // The destination sees the trace, as a child of this service's destination span, and the request id.
      expect(seen.at(-1)!.traceparent).toBe(`00-${traceId}-${destination.spanId}-01`);
      expect(seen.at(-1)!['x-request-id']).toBe(res.headers.get('x-request-id'));

      // The proxy's creation: its server span, its SQL (pg) and its cache-version traffic (Redis) nested in it.
      const create = await eventually(
        () => spans.find((s) => s.name === 'POST /proxies'),
        'the POST /proxies span',
        () => spans,
      );
      await eventually(
        () => spans.find((s) => s.traceId === create.traceId && s.scope.includes('instrumentation-pg')),
        'a pg span',
        () => spans,
      );
      await eventually(
        () => spans.find((s) => s.traceId === create.traceId && s.scope.includes('instrumentation-ioredis')),
        'an ioredis span',
        () => spans,
      );
      // The worker's job writing the audit log of that creation joins the request's trace (the context travels in
      // the BullMQ job's options), with its own SQL inside.
      const job = await eventually(
        () => spans.find((s) => s.service === 'gatehouse-worker' && s.name === 'job audit-log-batch' && s.traceId === create.traceId),
        "the audit log job's span in the request's trace",
        () => spans,
      );
      expect(job.parentSpanId).toBe(create.spanId);
      await eventually(
        () => spans.find((s) => s.parentSpanId === job.spanId && s.scope.includes('instrumentation-pg')),
        'a pg span in the job',
        () => spans,
      );

      // Jobs other services add, without a trace context or with one that is not ours to parse, run as before: their
      // spans start traces of their own.
      const queue = new Queue('audit-logs', { connection: { url: TEST_REDIS_URL }, prefix: env.QUEUE_PREFIX });
      try {
        const entry = () => ({
          tenant_id: tenant.id,
          entity_type: 'token',
          entity_id: `tok_${randomBytes(6).toString('hex')}`,
          operation: 'read',
          message: 'Token read',
        });
        const plain = await queue.add('audit-log', entry());
        const garbled = await queue.add('audit-log', entry(), { telemetry: { metadata: '{"traceparent":"not a traceparent"' } });
        for (const added of [plain, garbled]) {
          const span = await eventually(
            () => spans.find((s) => s.service === 'gatehouse-worker' && s.attributes['gatehouse.job.id'] === added.id),
            `job ${added.id}'s span`,
            () => spans,
          );
          expect(span.parentSpanId).toBeUndefined();
          expect(span.traceId).not.toBe(create.traceId);
          expect(await added.getState()).toBe('completed');
        }
      } finally {
        await queue.close();
      }
    } finally {
      expect(await api.stop()).toBe(0);
      expect(await worker.stop()).toBe(0);
      collector.server.closeAllConnections();
      await new Promise((resolve) => collector.server.close(resolve));
    }
  });

  it("embedded (no Redis: the in-process queue), an audit log job's span is a child of the request that added it, and links the others of its batch", async () => {
    const collector = await startCollector();
    const { key } = await newTenantKey();
    const api = await startServiceProcess(tracedEnv(collector.endpoint));
    const spans = collector.spans;
    try {
      // Concurrent requests: the publisher gathers the events of commits that close together into one job (its
      // timer runs in whichever request set it), so each request is that job's parent or one of its links.
      const traceIds = Array.from({ length: 6 }, () => randomBytes(16).toString('hex'));
      const statuses = await Promise.all(
        traceIds.map(async (traceId, i) => {
          const res = await fetch(`${api.baseUrl}/proxies`, {
            method: 'POST',
            headers: { 'svc-api-key': key, 'content-type': 'application/json', traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
            body: JSON.stringify({ name: `traced-embedded-${i}`, destination_url: upstream.origin, require_auth: false }),
          });
          return res.status;
        }),
      );
      expect(statuses).toEqual(traceIds.map(() => 201));
      for (const traceId of traceIds) {
        const server = await eventually(
          () => spans.find((s) => s.traceId === traceId && s.kind === SPAN_KIND_SERVER),
          'the server span',
          () => spans,
        );
        const jobs = await eventually(
          () => {
            const found = spans.filter(
              (s) =>
                s.name === 'job audit-log-batch' &&
                ((s.traceId === traceId && s.parentSpanId === server.spanId) || s.links.some((l) => l.traceId === traceId && l.spanId === server.spanId)),
            );
            return found.length > 0 ? found : undefined;
          },
          `the job span of the request in trace ${traceId}`,
          () => spans,
        );
        expect(jobs).toHaveLength(1);
        expect(jobs[0]!.service).toBe('gatehouse-api');
      }
    } finally {
      expect(await api.stop()).toBe(0);
      collector.server.closeAllConnections();
      await new Promise((resolve) => collector.server.close(resolve));
    }
  });
});
