import { createHash } from 'node:crypto';
import { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { Caller } from '../support/application-fixtures';

// Apps with their sandbox pools start per file, and some tests run transforms to the reactor's limits.
jest.setTimeout(30_000);

/** What the upstream saw of one request. */
export interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A local destination that records what it receives and answers per path. */
export async function recordingUpstream(): Promise<Upstream & { seen: Seen[] }> {
  const seen: Seen[] = [];
  const upstream = await startUpstream(async (req, res) => {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of req) chunks.push(chunk as Buffer);
    } catch {
      return; // the proxy cut the request (a body over the limit): nothing to answer
    }
    const body = Buffer.concat(chunks);
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
    const path = req.url!.split('?')[0]!;
    if (path.endsWith('/raw')) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'x-body-sha256': createHash('sha256').update(body).digest('hex') });
      return res.end(body);
    }
    if (path.endsWith('/teapot')) {
      res.writeHead(418, { 'content-type': 'text/plain', 'x-upstream': 'yes', 'keep-alive': 'timeout=5', 'proxy-authenticate': 'Basic' });
      return res.end('short and stout');
    }
    if (path.endsWith('/redirect')) {
      res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' });
      return res.end();
    }
    if (path.endsWith('/slow')) return setTimeout(() => res.end('late'), 3000).unref();
    if (path.endsWith('/json')) {
      res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'yes' });
      return res.end(JSON.stringify({ greeting: 'hello', card: '4242424242424242', got: body.toString('utf8') }));
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ method: req.method, url: req.url, length: body.length }));
  });
  return { ...upstream, seen };
}

export type RecordingUpstream = Awaited<ReturnType<typeof recordingUpstream>>;

/** The app (listening, so raw clients reach it too), the recording upstream, and the helpers proxy-invocation*.test.ts share. */
export function useProxyInvocation() {
  let t: TestApp;
  let base: string;
  let upstream: RecordingUpstream;

  beforeAll(async () => {
    upstream = await recordingUpstream();
    t = await startTestApp({
      PROXY_ALLOW_HTTP: 'true',
      PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
      PROXY_TIMEOUT_MS: '500',
      BODY_LIMIT_BYTES: String(64 * 1024),
      REACTOR_POOL_SIZE: '2',
    });
    // Listening, so raw clients (chunked bodies, hop-by-hop headers) reach it as well as supertest.
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t?.close();
    await upstream?.stop();
  });

  async function proxy(owner: Caller, body: Record<string, unknown> = {}): Promise<{ id: string; key: string }> {
    const res = await t
      .http()
      .post('/proxies')
      .set('svc-api-key', owner.key)
      .send({ name: 'test', destination_url: `${upstream.origin}/api/`, ...body });
    expect(res.status).toBe(201);
    return res.body;
  }

  const lastSeen = () => upstream.seen[upstream.seen.length - 1]!;
  return {
    get t() {
      return t;
    },
    get base() {
      return base;
    },
    get upstream() {
      return upstream;
    },
    proxy,
    lastSeen,
  };
}
