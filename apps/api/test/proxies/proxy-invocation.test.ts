import { createHash, randomBytes } from 'node:crypto';
import { IncomingHttpHeaders, request as httpRequest, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { request as undiciRequest } from 'undici';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { Caller, createApplication, newTenant } from '../support/application-fixtures';

// Apps with their sandbox pools start per file, and some tests run transforms to the reactor's limits.
jest.setTimeout(30_000);

/** What the upstream saw of one request. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A local destination that records what it receives and answers per path. */
async function recordingUpstream(): Promise<Upstream & { seen: Seen[] }> {
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


describe('proxy invocation (/proxy)', () => {
  let t: TestApp;
  let base: string;
  let upstream: Awaited<ReturnType<typeof recordingUpstream>>;

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

  it('joins the destination, the more path and the query without svc-proxy-key', async () => {
    const owner = await newTenant(t);
    const p = await proxy(owner, { require_auth: false });
    await t.http().get(`/proxy/foo/bar?x=1&svc-proxy-key=${p.key}&y=a%20b&y=c`).expect(200);
    expect(lastSeen().url).toBe('/api/foo/bar?x=1&y=a%20b&y=c');
    await t.http().get('/proxy').set('svc-proxy-key', p.key).expect(200);
    expect(lastSeen().url).toBe('/api');
    await t.http().delete('/proxy/items/7?svc-proxy-key=' + p.key).expect(200);
    expect(lastSeen()).toMatchObject({ method: 'DELETE', url: '/api/items/7' });
    for (const method of ['post', 'put', 'patch'] as const) {
      await t.http()[method]('/proxy/items').set('svc-proxy-key', p.key).set('content-type', 'application/json').send('{"a":1}').expect(200);
      expect(lastSeen()).toMatchObject({ method: method.toUpperCase(), url: '/api/items', body: Buffer.from('{"a":1}') });
    }
    const noSlash = await proxy(owner, { require_auth: false, destination_url: upstream.origin });
    await t.http().get('/proxy?q=1').set('svc-proxy-key', noSlash.key).expect(200);
    expect(lastSeen().url).toBe('/?q=1');
  });

  it('strips this service\'s credentials and hop-by-hop headers, sets host to the destination', async () => {
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
      const declared = await t.http().post('/proxy/raw').set('svc-proxy-key', p.key).set('content-type', 'application/octet-stream').send(randomBytes(64 * 1024 + 1));
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
      await t.http().post('/proxy/raw').set('svc-proxy-key', transformed.key).set('content-type', 'text/plain').send('x'.repeat(64 * 1024 + 1)).expect(413);
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

  describe('transforms', () => {
    it('a request transform rewrites body and headers, sees method, path, query and configuration', async () => {
      const owner = await newTenant(t);
      const code = `module.exports = async function (req) {
        const { body, headers, method, path, query } = req.args;
        return {
          body: { ...body, card: undefined, seen: { method, path, query, secret: req.configuration.SECRET } },
          headers: { ...headers, 'x-added': 'by-transform', 'content-length': '1' },
        };
      };`;
      const p = await proxy(owner, { require_auth: false, request_transform: { code }, configuration: { SECRET: 's3cr3t' } });
      await t
        .http()
        .post('/proxy/items/9?flag=on&svc-proxy-key=' + p.key)
        .set('content-type', 'application/json')
        .set('x-original', 'yes')
        .send({ card: '4242', amount: 10 })
        .expect(200);
      const sent = lastSeen();
      expect(sent.url).toBe('/api/items/9?flag=on');
      expect(JSON.parse(sent.body.toString())).toEqual({
        amount: 10,
        seen: { method: 'POST', path: '/items/9', query: { flag: 'on' }, secret: 's3cr3t' },
      });
      expect(sent.headers['content-length']).toBe(String(sent.body.length));
      expect(sent.headers['x-added']).toBe('by-transform');
      expect(sent.headers['x-original']).toBe('yes');
    });

    it("gives a request transform the header names as the caller wrote them, read, written and deleted in any case", async () => {
      const owner = await newTenant(t);
      const code = `module.exports = async function (req) {
        const h = req.args.headers;
        const names = Object.keys(h).filter((name) => name.toLowerCase().startsWith('x-'));
        const read = [h['x-custom-key'], h['X-CUSTOM-KEY'], h['X-Custom-Key']];
        delete h['x-secret'];
        h['x-CUSTOM-key'] = 'rewritten';
        return { body: { names, read }, headers: h };
      };`;
      const p = await proxy(owner, { require_auth: false, request_transform: { code } });
      await t
        .http()
        .post('/proxy/h?svc-proxy-key=' + p.key)
        .set('X-Custom-Key', 'abc')
        .set('X-Secret', 'must-not-pass')
        .set('content-type', 'application/json')
        .send({})
        .expect(200);
      const sent = lastSeen();
      expect(JSON.parse(sent.body.toString())).toEqual({ names: ['X-Custom-Key', 'X-Secret'], read: ['abc', 'abc', 'abc'] });
      expect(sent.headers['x-secret']).toBeUndefined();
      expect(sent.headers['x-custom-key']).toBe('rewritten');
    });

    it('hands a non-JSON body to the transform as a string', async () => {
      const owner = await newTenant(t);
      const code = `module.exports = async (req) => ({ body: typeof req.args.body + ':' + req.args.body.toUpperCase(), headers: req.args.headers });`;
      const p = await proxy(owner, { require_auth: false, request_transform: { code } });
      await t.http().post('/proxy/raw').set('svc-proxy-key', p.key).set('content-type', 'text/plain').send('plain words').expect(200);
      expect(lastSeen().body.toString()).toBe('string:PLAIN WORDS');
    });

    it('hands bodies over as they arrived (parsed in the sandbox) and sends what the transform returned byte for byte', async () => {
      const owner = await newTenant(t);
      // Echoes what it saw; a string body goes as it is, anything else as JSON (content type set unless the transform did).
      const code = `module.exports = async (req) => {
        const body = req.args.body;
        if (req.args.headers['x-mode'] === 'string') return { body: 'seen ' + typeof body + ':\\n' + JSON.stringify(body), headers: {} };
        return { body: { type: body === null ? 'null' : typeof body, body }, headers: req.args.headers['x-mode'] === 'typed' ? { 'content-type': 'application/vnd.x+json' } : {} };
      };`;
      const p = await proxy(owner, { require_auth: false, request_transform: { code } });
      const send = async (body: string, contentType: string, mode = '') => {
        await t.http().post('/proxy/raw').set('svc-proxy-key', p.key).set('content-type', contentType).set('x-mode', mode).send(body).expect(200);
        return lastSeen();
      };
      const pretty = JSON.stringify({ a: 'ü\ttab', list: [1, 2] }, null, 2);
      let seen = await send(pretty, 'application/json');
      expect(JSON.parse(seen.body.toString())).toEqual({ type: 'object', body: { a: 'ü\ttab', list: [1, 2] } });
      expect(seen.headers['content-type']).toBe('application/json');
      expect(seen.headers['content-length']).toBe(String(seen.body.length));
      seen = await send('{"not json', 'application/json', 'typed');
      expect(seen.body.toString()).toBe('{"type":"string","body":"{\\"not json"}');
      expect(seen.headers['content-type']).toBe('application/vnd.x+json');
      seen = await send('line 1\nline 2', 'text/plain', 'string');
      expect(seen.body.toString()).toBe('seen string:\n"line 1\\nline 2"');
      seen = await send('{"one":1}', 'text/plain', 'string');
      expect(seen.body.toString()).toBe('seen string:\n"{\\"one\\":1}"');
    });

    it('a response transform rewrites body, headers and status, and runs on every destination response', async () => {
      const owner = await newTenant(t);
      const code = `module.exports = async function (req) {
        const { body, headers, status } = req.args;
        return {
          status: status === 201 ? 202 : status,
          headers: { 'content-type': 'application/json', 'x-upstream': headers['x-upstream'] || 'none' },
          body: { status, masked: typeof body === 'object' ? body.card.slice(-4) : body },
        };
      };`;
      const p = await proxy(owner, { require_auth: false, response_transform: { code } });
      const res = await t.http().post('/proxy/json').set('svc-proxy-key', p.key).send({}).expect(202);
      expect(res.body).toEqual({ status: 201, masked: '4242' });
      expect(res.headers['x-upstream']).toBe('yes');
      expect(res.headers['svc-proxy-destination-status']).toBe('201');
      expect(res.headers['content-length']).toBe(String(Buffer.byteLength(JSON.stringify(res.body))));
      const teapot = await t.http().get('/proxy/teapot').set('svc-proxy-key', p.key).expect(418);
      expect(teapot.body).toEqual({ status: 418, masked: 'short and stout' });
    });

    it('sends a transform error as it is', async () => {
      const owner = await newTenant(t);
      const p = await proxy(owner, {
        require_auth: false,
        request_transform: { code: "module.exports = async () => { throw new BadRequestError('card number is missing'); };" },
      });
      const before = upstream.seen.length;
      const res = await t.http().post('/proxy/x').set('svc-proxy-key', p.key).send({}).expect(400);
      // The platform's body: the class's message as the detail, the constructor's argument among the errors.
      expect(res.body).toEqual({
        proxy_error: { title: 'One or more validation errors occurred.', status: 400, detail: 'Bad Request', errors: { error: ['card number is missing'] } },
      });
      expect(upstream.seen.length).toBe(before);

      const custom = await proxy(owner, {
        require_auth: false,
        response_transform: {
          code: "module.exports = async (req) => { throw new CustomHttpResponseError({ status: 409, headers: { 'x-why': 'dup' }, body: { dup: true } }); };",
        },
      });
      const res2 = await t.http().get('/proxy/json').set('svc-proxy-key', custom.key).expect(409);
      expect(res2.body).toEqual({ dup: true });
      expect(res2.headers['x-why']).toBe('dup');
      expect(res2.headers['svc-proxy-destination-status']).toBe('201');

      const thrown = await proxy(owner, { require_auth: false, request_transform: { code: "module.exports = async () => { throw new Error('boom'); };" } });
      const res3 = await t.http().get('/proxy/x').set('svc-proxy-key', thrown.key).expect(500);
      expect(res3.body.proxy_error).toMatchObject({ title: 'ReactorRuntimeError', status: 500, detail: expect.stringContaining('boom') });
    });
  });
});
