import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { request as undiciRequest } from 'undici';
import { TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream } from '@gatehouse/test-support/upstream';
import { createApplication, newTenant } from '../support/application-fixtures';
import { RecordingUpstream, useProxyInvocation } from './proxy-invocation.fixture';

describe('proxy invocation (/proxy)', () => {
  const env = useProxyInvocation();
  let t: TestApp;
  let base: string;
  let upstream: RecordingUpstream;
  beforeAll(() => ({ t, base, upstream } = env));
  const { proxy, lastSeen } = env;

  it('joins the destination, the more path and the query without svc-proxy-key', async () => {
    const owner = await newTenant(t);
    const p = await proxy(owner, { require_auth: false });
    await t.http().get(`/proxy/foo/bar?x=1&svc-proxy-key=${p.key}&y=a%20b&y=c`).expect(200);
    expect(lastSeen().url).toBe('/api/foo/bar?x=1&y=a%20b&y=c');
    await t.http().get('/proxy').set('svc-proxy-key', p.key).expect(200);
    expect(lastSeen().url).toBe('/api');
    await t
      .http()
      .delete('/proxy/items/7?svc-proxy-key=' + p.key)
      .expect(200);
    expect(lastSeen()).toMatchObject({ method: 'DELETE', url: '/api/items/7' });
    for (const method of ['post', 'put', 'patch'] as const) {
      await t.http()[method]('/proxy/items').set('svc-proxy-key', p.key).set('content-type', 'application/json').send('{"a":1}').expect(200);
      expect(lastSeen()).toMatchObject({ method: method.toUpperCase(), url: '/api/items', body: Buffer.from('{"a":1}') });
    }
    const noSlash = await proxy(owner, { require_auth: false, destination_url: upstream.origin });
    await t.http().get('/proxy?q=1').set('svc-proxy-key', noSlash.key).expect(200);
    expect(lastSeen().url).toBe('/?q=1');
  });

  it("strips this service's credentials and hop-by-hop headers, sets host to the destination", async () => {
    const owner = await newTenant(t);
    const p = await proxy(owner);
    // node:http, because undici refuses to send hop-by-hop headers at all.
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${base}/proxy/h`, {
        method: 'POST',
        headers: {
          'svc-api-key': owner.key,
          'svc-proxy-key': p.key,
          host: 'gatehouse.example.com',
          'keep-alive': 'timeout=5',
          te: 'trailers',
          'proxy-authorization': 'Basic Zm9vOmJhcg==',
          'proxy-connection': 'keep-alive',
          connection: 'keep-alive, x-named-by-connection',
          'x-named-by-connection': 'drop me',
          'x-custom': 'kept',
          authorization: 'Bearer for-the-destination',
          'content-type': 'text/plain',
        },
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      req.end('hello');
    });
    expect(status).toBe(200);
    const headers = lastSeen().headers;
    expect(headers.host).toBe(`127.0.0.1:${upstream.port}`);
    expect(headers['x-custom']).toBe('kept');
    expect(headers.authorization).toBe('Bearer for-the-destination');
    expect(headers['content-type']).toBe('text/plain');
    for (const name of ['svc-api-key', 'svc-proxy-key', 'keep-alive', 'te', 'proxy-authorization', 'proxy-connection', 'x-named-by-connection']) {
      expect({ name, value: headers[name] }).toEqual({ name, value: undefined });
    }
    expect(lastSeen().body.toString()).toBe('hello');
  });

  it('returns the destination response with svc-proxy-destination-status, minus hop-by-hop headers', async () => {
    const owner = await newTenant(t);
    const p = await proxy(owner, { require_auth: false });
    const res = await t.http().get('/proxy/teapot').set('svc-proxy-key', p.key).expect(418);
    expect(res.text).toBe('short and stout');
    expect(res.headers['svc-proxy-destination-status']).toBe('418');
    expect(res.headers['x-upstream']).toBe('yes');
    expect(res.headers['proxy-authenticate']).toBeUndefined();
    expect(res.headers['keep-alive']).not.toBe('timeout=5');
  });

  it('does not follow redirects', async () => {
    const owner = await newTenant(t);
    const p = await proxy(owner, { require_auth: false });
    const before = upstream.seen.length;
    const res = await t.http().get('/proxy/redirect').set('svc-proxy-key', p.key).redirects(0).expect(302);
    expect(res.headers.location).toBe('http://127.0.0.1:1/elsewhere');
    expect(res.headers['svc-proxy-destination-status']).toBe('302');
    expect(upstream.seen.length).toBe(before + 1);
  });

  describe('authentication', () => {
    it('require_auth: 401 without or with an invalid key, 403 without proxy:invoke or from another tenant', async () => {
      const owner = await newTenant(t);
      const other = await newTenant(t);
      const p = await proxy(owner);
      const invoker = await createApplication(t, owner.key, { name: 'invoker', type: 'private', permissions: ['proxy:invoke'] });
      const noInvoke = await createApplication(t, owner.key, { name: 'reader', type: 'private', permissions: ['token:read'] });
      const foreign = await createApplication(t, other.key, { name: 'invoker', type: 'private', permissions: ['proxy:invoke'] });

      const invoke = (apiKey?: string) => {
        const req = t.http().get('/proxy/x').set('svc-proxy-key', p.key);
        return apiKey === undefined ? req : req.set('svc-api-key', apiKey);
      };
      const missing = await invoke().expect(401);
      expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
      await invoke('key_thisisnotakeythisisnotakeythisisnotakey').expect(401);
      await invoke(noInvoke.key).expect(403);
      await invoke(foreign.key).expect(403);
      await invoke(other.key).expect(403);
      const before = upstream.seen.length;
      await invoke(invoker.key).expect(200);
      await invoke(owner.key).expect(200);
      expect(upstream.seen.length).toBe(before + 2);
    });

    it('require_auth false: the proxy key alone suffices', async () => {
      const owner = await newTenant(t);
      const p = await proxy(owner, { require_auth: false });
      await t.http().get('/proxy/x').set('svc-proxy-key', p.key).expect(200);
      await t.http().get(`/proxy/x?svc-proxy-key=${p.key}`).expect(200);
    });

    it('404 for a missing or unknown proxy key, without contacting anything', async () => {
      const before = upstream.seen.length;
      const missing = await t.http().get('/proxy/x').expect(404);
      expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
      await t.http().get('/proxy/x').set('svc-proxy-key', 'A'.repeat(32)).expect(404);
      await t.http().get('/proxy/x').set('svc-proxy-key', "' OR 1=1 --").expect(404);
      expect(upstream.seen.length).toBe(before);
    });

    it('an update or a delete applies to the very next invocation', async () => {
      const owner = await newTenant(t);
      const p = await proxy(owner, { require_auth: false });
      await t.http().get('/proxy/one').set('svc-proxy-key', p.key).expect(200);
      await t
        .http()
        .patch(`/proxies/${p.id}`)
        .set('svc-api-key', owner.key)
        .set('content-type', 'application/merge-patch+json')
        .send(JSON.stringify({ destination_url: `${upstream.origin}/moved`, require_auth: true }))
        .expect(200);
      await t.http().get('/proxy/two').set('svc-proxy-key', p.key).expect(401);
      await t.http().get('/proxy/two').set('svc-proxy-key', p.key).set('svc-api-key', owner.key).expect(200);
      expect(lastSeen().url).toBe('/moved/two');
      await t.http().delete(`/proxies/${p.id}`).set('svc-api-key', owner.key).expect(204);
      await t.http().get('/proxy/three').set('svc-proxy-key', p.key).set('svc-api-key', owner.key).expect(404);
    });

    it('serves /proxy exactly: other spellings are no proxy route', async () => {
      const owner = await newTenant(t);
      const p = await proxy(owner, { require_auth: false });
      const before = upstream.seen.length;
      await t.http().get('/PROXY/x').set('svc-proxy-key', p.key).expect(404);
      await t.http().get('/proxyx').set('svc-proxy-key', p.key).expect(404);
      expect(upstream.seen.length).toBe(before);
    });

    it('405 for methods other than GET, POST, PUT, PATCH and DELETE', async () => {
      const owner = await newTenant(t);
      const p = await proxy(owner, { require_auth: false });
      const res = await t.http().options('/proxy/x').set('svc-proxy-key', p.key).expect(405);
      expect(res.headers.allow).toBe('GET, POST, PUT, PATCH, DELETE');
    });
  });

  describe('bodies', () => {
    it('passes a binary body through untouched, both ways', async () => {
      const owner = await newTenant(t);
      const p = await proxy(owner, { require_auth: false });
      const bytes = randomBytes(48 * 1024);
      const res = await t
        .http()
        .post('/proxy/raw')
        .set('svc-proxy-key', p.key)
        .set('content-type', 'application/octet-stream')
        .send(bytes)
        .buffer(true)
        .parse((response, callback) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => callback(null, Buffer.concat(chunks)));
        })
        .expect(200);
      expect(lastSeen().body.equals(bytes)).toBe(true);
      expect(Buffer.compare(res.body as Buffer, bytes)).toBe(0);
      expect(res.headers['x-body-sha256']).toBe(createHash('sha256').update(bytes).digest('hex'));
    });

    it('streams a chunked request body through', async () => {
      const owner = await newTenant(t);
      const p = await proxy(owner, { require_auth: false });
      const parts = [randomBytes(1000), randomBytes(20_000), randomBytes(7)];
      async function* chunks() {
        for (const part of parts) yield part;
      }
      const res = await undiciRequest(`${base}/proxy/raw`, { method: 'POST', headers: { 'svc-proxy-key': p.key }, body: Readable.from(chunks()) });
      const echoed = Buffer.from(await res.body.arrayBuffer());
      expect(res.statusCode).toBe(200);
      expect(echoed.equals(Buffer.concat(parts))).toBe(true);
      expect(lastSeen().body.equals(Buffer.concat(parts))).toBe(true);
    });

    it('413 for a body over BODY_LIMIT_BYTES, declared or chunked, before the destination answers', async () => {
      const owner = await newTenant(t);
      const p = await proxy(owner, { require_auth: false });
      const before = upstream.seen.length;
      const declared = await t
        .http()
        .post('/proxy/raw')
        .set('svc-proxy-key', p.key)
        .set('content-type', 'application/octet-stream')
        .send(randomBytes(64 * 1024 + 1));
      expect(declared.status).toBe(413);
      expect(declared.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(upstream.seen.length).toBe(before);

      async function* tooMuch() {
        for (let i = 0; i < 10; i++) yield randomBytes(16 * 1024);
      }
      const chunked = await undiciRequest(`${base}/proxy/raw`, { method: 'POST', headers: { 'svc-proxy-key': p.key }, body: Readable.from(tooMuch()) }).catch(
        (error: Error) => error,
      );
      // Either the 413 arrives, or the connection is cut while the client still sends; never a 200.
      if (!(chunked instanceof Error)) {
        expect(chunked.statusCode).toBe(413);
        await chunked.body.dump();
      }
      const transformed = await proxy(owner, { require_auth: false, request_transform: { code: 'module.exports = async (req) => req.args;' } });
      await t
        .http()
        .post('/proxy/raw')
        .set('svc-proxy-key', transformed.key)
        .set('content-type', 'text/plain')
        .send('x'.repeat(64 * 1024 + 1))
        .expect(413);
    });
  });

  describe('destination failures', () => {
    it('502 when the destination is unreachable', async () => {
      const owner = await newTenant(t);
      // A port that was free a moment ago: nothing listens there any more.
      const closed = await startUpstream(() => undefined);
      await closed.stop();
      const p = await proxy(owner, { require_auth: false, destination_url: closed.origin });
      const res = await t.http().get('/proxy/x').set('svc-proxy-key', p.key).expect(502);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.headers['svc-proxy-destination-status']).toBeUndefined();
    });

    it('504 when the destination does not answer within PROXY_TIMEOUT_MS', async () => {
      const owner = await newTenant(t);
      const p = await proxy(owner, { require_auth: false });
      const res = await t.http().get('/proxy/slow').set('svc-proxy-key', p.key).expect(504);
      expect(res.body.detail).toContain('500 ms');
    });
  });
});
