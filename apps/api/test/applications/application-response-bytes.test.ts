import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import type { TestApp } from '@gatehouse/test-support/test-app';
import { ANY_UUID, appWithTenant, as, Caller, createApplication, CreatedApplication } from '../support/application-fixtures';

interface Raw {
  /** Status line and header lines as sent, with the Date and the live RateLimit state (`r`, `t`) blanked. */
  head: string;
  body: string;
}

/**
 * GET /applications/{id} (and /applications/key) answer from a serialisation kept with the cached application
 * (sendPreparedJson). These answers must be, byte for byte, what the API sent before: what express's res.json sends for
 * the same response object (a conditional or HEAD request still goes that way), with the same body as the response
 * objects of the other routes.
 */
describe('GET /applications/{id}: the answer kept with the cached application', () => {
  let t: TestApp;
  let admin: Caller;
  let caller: CreatedApplication;
  let port: number;

  beforeAll(async () => {
    ({ t, admin } = await appWithTenant());
    // A limit, so the answers carry the RateLimit headers as well.
    caller = await createApplication(t, admin.key, {
      name: 'reader',
      type: 'management',
      permissions: ['application:read'],
      rate_limit: { limit: 100_000, window_seconds: 60 },
    });
    const server = t.app.getHttpServer() as Server;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  }, 60_000);
  afterAll(() => t.close());

  async function raw(method: string, path: string, extra = ''): Promise<Raw> {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.write(
      `${method} ${path} HTTP/1.1\r\nHost: gatehouse\r\nSVC-API-KEY: ${caller.key}\r\nX-Request-Id: bytes-test\r\n${extra}Connection: close\r\n\r\n`,
    );
    await once(socket, 'close');
    const text = Buffer.concat(chunks).toString('utf8');
    const at = text.indexOf('\r\n\r\n');
    const head = text
      .slice(0, at)
      .replace(/\r\nDate: [^\r]+/, '\r\nDate: -')
      .replace(/\r\nratelimit: "application";r=\d+;t=\d+/, '\r\nratelimit: "application";r=-;t=-');
    return { head, body: text.slice(at + 4) };
  }

  /** The same request answered by res.json (a conditional request; nothing sets Last-Modified, so still a 200). */
  const byResJson = (path: string) => raw('GET', path, 'If-Modified-Since: Tue, 01 Jan 2030 00:00:00 GMT\r\n');

  async function expectSameAsResJson(path: string): Promise<Raw> {
    const reference = await byResJson(path);
    expect(reference.head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    // The first read loads the cache entry, the next ones are served from it: all alike.
    for (let i = 0; i < 3; i++) expect(await raw('GET', path)).toEqual(reference);
    // The header lines in the order the API has always sent them.
    expect(
      reference.head
        .split('\r\n')
        .slice(1)
        .map((line) => line.slice(0, line.indexOf(':'))),
    ).toEqual(['x-request-id', 'X-Content-Type-Options', 'ratelimit-policy', 'ratelimit', 'Content-Type', 'Content-Length', 'Date', 'Connection']);
    expect(reference.head).toContain('\r\nContent-Type: application/json; charset=utf-8\r\n');
    expect(reference.head).toContain(`\r\nContent-Length: ${Buffer.byteLength(reference.body)}\r\n`);
    return reference;
  }

  /** The body of the list route (a response object returned to Nest), for one application. */
  async function listed(id: string): Promise<string> {
    const res = await as(t, caller.key).get(`/applications?id=${id}`).expect(200);
    expect(res.body.data).toHaveLength(1);
    return JSON.stringify(res.body.data[0]);
  }

  it.each([
    ['a small body (written as a string)', { name: 'small', type: 'private', permissions: ['token:read'] }],
    [
      'a body of 1000 characters and more (written as a Buffer), non-ASCII included',
      {
        name: 'größer ✓',
        type: 'private',
        permissions: ['token:read', 'token:search'],
        rules: [1, 2, 3].map((priority) => ({
          priority,
          description: `ü${'r'.repeat(400)}`,
          container: `/c${priority}/`,
          transform: 'reveal',
          permissions: ['token:read'],
        })),
        rate_limit: { limit: 10, window_seconds: 60 },
      },
    ],
  ])('with %s: byte for byte what res.json sends, the body the list route has', async (_label, body) => {
    const target = await createApplication(t, admin.key, body);
    const reference = await expectSameAsResJson(`/applications/${target.id}`);
    expect(reference.body).toBe(await listed(target.id));
    if ('rules' in body) expect(reference.body.length).toBeGreaterThanOrEqual(1000);
  });

  it('serves a change at once: the kept answer goes with the cache entry it was made from', async () => {
    const target = await createApplication(t, admin.key, { name: 'before', type: 'private', permissions: ['token:read'] });
    const before = await expectSameAsResJson(`/applications/${target.id}`);
    expect(JSON.parse(before.body).name).toBe('before');
    await as(t, admin.key)
      .put(`/applications/${target.id}`, { name: 'after', permissions: ['token:read'] })
      .expect(200);
    const after = await expectSameAsResJson(`/applications/${target.id}`);
    expect(JSON.parse(after.body)).toMatchObject({ name: 'after', modified_by: admin.applicationId });
    expect(after.body).toBe(await listed(target.id));
  });

  it('answers HEAD with the headers of the GET and no body', async () => {
    const target = await createApplication(t, admin.key, { name: 'head', type: 'private', permissions: ['token:read'] });
    const get = await expectSameAsResJson(`/applications/${target.id}`);
    expect(await raw('HEAD', `/applications/${target.id}`)).toEqual({ head: get.head, body: '' });
  });

  it('answers GET /applications/key the same way', async () => {
    const reference = await expectSameAsResJson('/applications/key');
    expect(JSON.parse(reference.body)).toMatchObject({ id: caller.id, name: 'reader' });
  });

  it('still answers a missing or malformed id with ProblemDetails', async () => {
    const missing = await raw('GET', `/applications/${ANY_UUID}`);
    expect(missing.head).toMatch(/^HTTP\/1\.1 404 /);
    expect(missing.head).toContain('\r\nContent-Type: application/problem+json');
    expect(JSON.parse(missing.body)).toMatchObject({ status: 404, instance: 'bytes-test' });
    const malformed = await raw('GET', '/applications/not-a-uuid');
    expect(malformed.head).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(malformed.body)).toMatchObject({ status: 400, errors: { id: ['must be a UUID'] } });
  });
});
