import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { as, newTenant } from '../support/application-fixtures';

jest.setTimeout(30_000);

/** One request written byte for byte on a socket, so no client normalises the path on the way. */
async function rawRequest(port: number, target: string, headers: Record<string, string>): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body });
    });
    const lines = [`GET ${target} HTTP/1.1`, 'host: gatehouse.test', 'connection: close', ...Object.entries(headers).map(([n, v]) => `${n}: ${v}`)];
    socket.write(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  });
}

/**
 * A proxy never reaches outside the path of its destination_url (CONTRACT.md section 11): `<more path>` segments that
 * are dot segments after any number of percent-decodings, or hold a backslash, an encoded slash or a control
 * character, are a 400 ProblemDetails and the destination sees nothing. Requests are written raw on a socket.
 */
describe('proxy path escape', () => {
  let t: TestApp;
  let port: number;
  let upstream: Upstream;
  const received: string[] = [];
  let proxyKey: string;

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      received.push(req.url!);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ url: req.url }));
    });
    t = await startTestApp({ PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8', REACTOR_POOL_SIZE: '1' });
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    const owner = await newTenant(t);
    const proxy = await as(t, owner.key)
      .post('/proxies', { name: 'open', destination_url: `${upstream.origin}/open/`, require_auth: false })
      .expect(201);
    proxyKey = proxy.body.key;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await upstream?.stop();
  });

  const ESCAPES: [string, string][] = [
    ['plain dot-dot', '/../../secret'],
    ['dot-dot alone', '/..'],
    ['dot alone', '/.'],
    ['dot segment', '/./secret'],
    ['dot-dot after a segment', '/a/../../secret'],
    ['trailing dot-dot', '/a/..'],
    ['encoded dot-dot', '/%2e%2e/secret'],
    ['encoded dot-dot, capitals', '/%2E%2E/secret'],
    ['encoded dot-dot and slash', '/%2E%2E%2Fsecret'],
    ['encoded dot-dot-slash twice', '/%2e%2e%2f%2e%2e%2fsecret'],
    ['half-encoded dot-dot', '/.%2e/secret'],
    ['other half', '/%2e./secret'],
    ['encoded single dot', '/%2e/secret'],
    ['raw backslash', '/..\\secret'],
    ['raw backslash alone', '/a\\b'],
    ['encoded backslash', '/..%5csecret'],
    ['encoded backslash, capital', '/..%5Csecret'],
    ['encoded slash', '/a%2fb'],
    ['encoded slash, capital', '/a%2Fb'],
    ['double-encoded dot-dot', '/%252e%252e/secret'],
    ['double-encoded, capitals', '/%252E%252E%252Fsecret'],
    ['triple-encoded dot-dot', '/%25252e%25252e/secret'],
    ['double-encoded backslash', '/..%255csecret'],
    ['double-encoded slash', '/a%252fb'],
    ['percent-encoded percent sign building %2e', '/%%32%65%%32%65/secret'],
    ['overlong UTF-8 dots', '/%c0%ae%c0%ae/secret'],
    ['overlong three-byte dot', '/%e0%80%ae%e0%80%ae/secret'],
    ['IIS %u dots', '/%u002e%u002e/secret'],
    ['fullwidth dots', '/%ef%bc%8e%ef%bc%8e/secret'],
    ['fullwidth solidus', '/a%ef%bc%8fb'],
    ['fullwidth reverse solidus', '/a%ef%bc%bcb'],
    ['dot-dot with a path parameter', '/..;/secret'],
    ['encoded dot-dot with a parameter', '/%2e%2e;x=1/secret'],
    ['dot-dot before an encoded ?', '/..%3F/secret'],
    ['dot-dot before an encoded #', '/..%23x/secret'],
    ['dot-dot before a double-encoded ?', '/..%253f/secret'],
    ['three dots', '/.../secret'],
    ['dot-dot and a space', '/..%20/secret'],
    ['NUL', '/a%00b'],
    ['dot-dot behind NUL', '/..%00/secret'],
    ['encoded CR LF', '/a%0d%0aX-Injected:%201'],
    ['invalid UTF-8', '/%ff'],
    ['dot-dot before the query', '/../secret?x=1'],
  ];

  it.each(ESCAPES)('refuses %s (%s) with a 400, and the destination sees nothing', async (_, path) => {
    const before = received.length;
    const res = await rawRequest(port, `/proxy${path}`, { 'svc-proxy-key': proxyKey });
    expect(res.status).toBe(400);
    expect(res.headers).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(res.body)).toMatchObject({ status: 400, detail: expect.stringMatching(/^The proxy path must/) });
    // The same path with the key in the query string is refused alike.
    const sep = path.includes('?') ? '&' : '?';
    expect((await rawRequest(port, `/proxy${path}${sep}svc-proxy-key=${proxyKey}`, {})).status).toBe(400);
    expect(received.slice(before)).toEqual([]);
  });

  it.each([
    ['/a/b.c/d', '/open/a/b.c/d'],
    ['/v1.2/x', '/open/v1.2/x'],
    ['/file..txt', '/open/file..txt'],
    ['/.well-known/x', '/open/.well-known/x'],
    ['/100%25', '/open/100%25'],
    ['/a%20b', '/open/a%20b'],
    ['/%E2%82%AC', '/open/%E2%82%AC'],
    ['/a;b=c', '/open/a;b=c'],
    ['/x?path=../../etc', '/open/x?path=../../etc'],
    ['', '/open'],
    ['/', '/open/'],
  ])('forwards %s as %s, unchanged', async (path, expected) => {
    const before = received.length;
    const res = await rawRequest(port, `/proxy${path}`, { 'svc-proxy-key': proxyKey });
    expect(res.status).toBe(200);
    expect(received.slice(before)).toEqual([expected]);
  });

  it('takes no path from a request transform: what it returns as path is not where the request goes', async () => {
    const owner = await newTenant(t);
    const code = "module.exports = async (req) => ({ body: req.args.body, headers: req.args.headers, path: '/../../secret' });";
    const proxy = await as(t, owner.key)
      .post('/proxies', { name: 't', destination_url: `${upstream.origin}/open/`, require_auth: false, request_transform: { code } })
      .expect(201);
    const before = received.length;
    const res = await rawRequest(port, '/proxy/x', { 'svc-proxy-key': proxy.body.key });
    expect(res.status).toBe(200);
    expect(received.slice(before)).toEqual(['/open/x']);
  });
});
