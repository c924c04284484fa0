import { createHash, createHmac } from 'node:crypto';
import { Reactor, type SvcBridge, type SvcRequest, type SvcResponse, type TransformInput } from './index';
import { okBody } from '../test/support/reactor-results';

function input(code: string, extra: Partial<TransformInput> = {}): TransformInput {
  return {
    tenantId: 'tenant-a',
    code,
    args: { body: { card: '4242' }, headers: { 'content-type': 'application/json' }, method: 'POST', path: '/charges', query: { a: '1' } },
    configuration: { API_KEY: 'secret-value' },
    ...extra,
  };
}

class FakeBridge implements SvcBridge {
  readonly calls: SvcRequest[] = [];
  constructor(private readonly answer: (req: SvcRequest) => SvcResponse | Promise<SvcResponse>) {}
  async request(req: SvcRequest): Promise<SvcResponse> {
    this.calls.push(req);
    return this.answer(req);
  }
}

describe('Reactor: transforms that work', () => {
  let reactor: Reactor;
  beforeAll(() => {
    reactor = new Reactor({ poolSize: 2, timeoutMs: 3000 });
  });
  afterAll(() => reactor.close());

  it('runs a request transform that rewrites the JSON body and headers', async () => {
    const result = await reactor.run(
      input(`module.exports = async function (req) {
        const { body, headers, method, path, query } = req.args;
        return {
          body: { ...body, card: 'tok_' + body.card.slice(-2), seen: method + ' ' + path + '?a=' + query.a },
          headers: { ...headers, 'x-transformed': 'yes', 'x-count': 3, 'x-dropped': { nested: true } },
        };
      };`),
    );
    expect(result).toEqual({
      ok: true,
      body: { card: 'tok_42', seen: 'POST /charges?a=1' },
      headers: { 'content-type': 'application/json', 'x-transformed': 'yes', 'x-count': '3' },
      logs: [],
    });
  });

  it('runs a response transform that changes the status', async () => {
    const result = await reactor.run({
      tenantId: 'tenant-a',
      code: `module.exports = async (req) => ({ status: req.args.status === 200 ? 202 : 500, body: 'accepted', headers: req.args.headers });`,
      args: { body: { ok: true }, headers: { 'x-up': '1' }, status: 200 },
      configuration: {},
    });
    expect(result).toEqual({ ok: true, status: 202, body: 'accepted', headers: { 'x-up': '1' }, logs: [] });
  });

  it('passes string bodies through and exposes the configuration', async () => {
    const result = await reactor.run(
      input(`module.exports = async (req) => ({ body: req.configuration.API_KEY + ':' + typeof req.args.body, headers: {} });`, {
        args: { body: 'raw text', headers: {} },
      }),
    );
    expect(okBody(result)).toBe('secret-value:string');
  });

  it('captures console output into the logs, capped, and never prints it', async () => {
    const stdout = jest.spyOn(process.stdout, 'write');
    const result = await reactor.run(
      input(`module.exports = async () => {
        console.log('hello', { a: 1 }, [1, 2], 3n);
        console.info('%s is %d', 'x', 42);
        console.warn('careful');
        console.error(new TypeError('bad thing'));
        console.debug(Buffer.from('hi'));
        console.log('x'.repeat(5000));
        for (let i = 0; i < 200; i++) console.log('line', i);
        return { body: null, headers: {} };
      };`),
    );
    expect(stdout).not.toHaveBeenCalledWith(expect.stringContaining('careful'));
    stdout.mockRestore();
    expect(result.logs).toHaveLength(100);
    expect(result.logs.slice(0, 4)).toEqual([
      'hello {"a":1} [1,2] 3n',
      '[info] x is 42',
      '[warn] careful',
      expect.stringMatching(/^\[error\] TypeError: bad thing\n\s+at /),
    ]);
    expect(result.logs[4]).toBe('[debug] <Buffer 68 69>');
    expect(result.logs[5]).toBe('x'.repeat(2000));
    expect(result.logs[99]).toBe('line 93');
  });

  it('provides Buffer, URL, URLSearchParams, TextEncoder, TextDecoder, atob and btoa', async () => {
    const result = await reactor.run(
      input(`module.exports = async () => {
        const b = Buffer.from('héllo wörld', 'utf8');
        const u = new URL('/v1/items?x=1&y=a+b#frag', 'https://user:pw@Example.com:8443/base/');
        u.searchParams.append('z', 'ä ö');
        u.searchParams.delete('x');
        const q = new URLSearchParams({ a: '1', b: 'two words' });
        q.append('a', '3');
        return { headers: {}, body: {
          utf8: b.toString(), base64: b.toString('base64'), hex: b.toString('hex'), base64url: b.toString('base64url'),
          fromBase64: Buffer.from('aMOpbGxv', 'base64').toString('utf8'), fromHex: Buffer.from('6869', 'hex').toString(),
          concat: Buffer.concat([Buffer.from('ab'), Buffer.from([99, 100])]).toString(),
          byteLength: Buffer.byteLength('héllo'), isBuffer: [Buffer.isBuffer(b), Buffer.isBuffer(new Uint8Array(2))],
          alloc: Buffer.alloc(4, 1).toString('hex'), slice: b.slice(0, 2).toString('hex'), json: Buffer.from('ab').toJSON(),
          readUInt16BE: Buffer.from([1, 2]).readUInt16BE(0), equals: Buffer.from('a').equals(Buffer.from('a')),
          href: u.href, host: u.host, hostname: u.hostname, port: u.port, pathname: u.pathname, search: u.search,
          hash: u.hash, origin: u.origin, username: u.username, y: u.searchParams.get('y'),
          params: q.toString(), getAll: q.getAll('a'), has: q.has('b'), entries: [...q],
          encoded: Array.from(new TextEncoder().encode('✓é')), decoded: new TextDecoder().decode(new Uint8Array([0xe2, 0x9c, 0x93, 0xff])),
          btoa: btoa('hello'), atob: atob('aGVsbG8='), canParse: [URL.canParse('nope'), URL.canParse('https://x.y')],
          invalid: (() => { try { new URL('not a url'); return 'parsed'; } catch (e) { return e.name; } })(),
        } };
      };`),
    );
    const nodeUrl = new URL('/v1/items?x=1&y=a+b#frag', 'https://user:pw@Example.com:8443/base/');
    nodeUrl.searchParams.append('z', 'ä ö');
    nodeUrl.searchParams.delete('x');
    const q = new URLSearchParams({ a: '1', b: 'two words' });
    q.append('a', '3');
    const b = Buffer.from('héllo wörld', 'utf8');
    expect(okBody(result)).toEqual({
      utf8: 'héllo wörld',
      base64: b.toString('base64'),
      hex: b.toString('hex'),
      base64url: b.toString('base64url'),
      fromBase64: 'héllo',
      fromHex: 'hi',
      concat: 'abcd',
      byteLength: Buffer.byteLength('héllo'),
      isBuffer: [true, false],
      alloc: '01010101',
      slice: b.subarray(0, 2).toString('hex'),
      json: { type: 'Buffer', data: [97, 98] },
      readUInt16BE: 258,
      equals: true,
      href: nodeUrl.href,
      host: nodeUrl.host,
      hostname: nodeUrl.hostname,
      port: nodeUrl.port,
      pathname: nodeUrl.pathname,
      search: nodeUrl.search,
      hash: nodeUrl.hash,
      origin: nodeUrl.origin,
      username: nodeUrl.username,
      y: 'a b',
      params: q.toString(),
      getAll: ['1', '3'],
      has: true,
      entries: [...q],
      encoded: Array.from(new TextEncoder().encode('✓é')),
      decoded: new TextDecoder().decode(new Uint8Array([0xe2, 0x9c, 0x93, 0xff])),
      btoa: btoa('hello'),
      atob: 'hello',
      canParse: [false, true],
      invalid: 'TypeError',
    });
  });

  it("implements require('crypto') on the host's node:crypto", async () => {
    const result = await reactor.run(
      input(`const crypto = require('crypto');
      module.exports = async () => ({ headers: {}, body: {
        sha1: crypto.createHash('sha1').update('abc').digest('hex'),
        sha256: crypto.createHash('sha256').update('ab').update(Buffer.from('c')).digest('hex'),
        sha512: crypto.createHash('sha512').update('abc').digest('base64'),
        md5: crypto.createHash('md5').update('616263', 'hex').digest('hex'),
        hmac: crypto.createHmac('sha256', 'key').update('message').digest('hex'),
        hmacBufferKey: crypto.createHmac('sha512', Buffer.from([1, 2, 3])).update('m').digest('base64'),
        hmacLongKey: crypto.createHmac('sha384', 'k'.repeat(200)).update('m').digest('HEX'),
        encodings: ['latin1', 'base64url', 'Base64', 'binary'].map((e) => crypto.createHash('sha1').update('abc').digest(e)),
        rawHmac: Buffer.isBuffer(crypto.createHmac('md5', 'k').update('x').digest()),
        text: crypto.createHmac('sha256', 'clé ✓').update('a\u00e9').update('\ud83d\ude00 \ud800').digest('hex'),
        mixed: crypto.createHash('sha256').update('ab').update(Buffer.from([0xff])).update('✓').digest('base64'),
        latin1: crypto.createHash('md5').update('\u00e9', 'latin1').update('x').digest('hex'),
        rawDigest: Buffer.isBuffer(crypto.createHash('sha256').update('x').digest()),
        uuid: crypto.randomUUID(),
        random: [crypto.randomBytes(16).length, Buffer.isBuffer(crypto.randomBytes(4))],
        nodePrefix: require('node:crypto') === crypto,
        unknown: (() => { try { crypto.createHash('whirlpool'); } catch (e) { return e.message; } })(),
      } });`),
    );
    const body = okBody(result);
    expect(body).toEqual({
      sha1: createHash('sha1').update('abc').digest('hex'),
      sha256: createHash('sha256').update('abc').digest('hex'),
      sha512: createHash('sha512').update('abc').digest('base64'),
      md5: createHash('md5').update('abc').digest('hex'),
      hmac: createHmac('sha256', 'key').update('message').digest('hex'),
      hmacBufferKey: createHmac('sha512', Buffer.from([1, 2, 3]))
        .update('m')
        .digest('base64'),
      hmacLongKey: createHmac('sha384', 'k'.repeat(200)).update('m').digest('hex'),
      encodings: ['latin1', 'base64url', 'base64', 'latin1'].map((e) =>
        createHash('sha1')
          .update('abc')
          .digest(e as 'binary'),
      ),
      rawHmac: true,
      text: createHmac('sha256', 'clé ✓').update('a\u00e9').update('\ud83d\ude00 \ud800').digest('hex'),
      mixed: createHash('sha256')
        .update('ab')
        .update(Buffer.from([0xff]))
        .update('✓')
        .digest('base64'),
      latin1: createHash('md5').update('\u00e9', 'latin1').update('x').digest('hex'),
      rawDigest: true,
      uuid: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      random: [16, true],
      nodePrefix: true,
      unknown: 'Digest method not supported',
    });
  });

  it('holds digests to 32 MiB of input, counting text by its UTF-8 bytes', async () => {
    const roomy = new Reactor({ poolSize: 1, memoryLimitMb: 128 });
    try {
      const result = await roomy.run(
        input(`const crypto = require('crypto');
        module.exports = async () => {
          const ascii = crypto.createHash('sha1').update('a'.repeat(11200000)).digest('hex');
          let over = null;
          try { crypto.createHmac('sha1', 'k').update('a'.repeat(30000000)).update('€'.repeat(1200000)); } catch (e) { over = e.name + ': ' + e.message; }
          return { headers: {}, body: { ascii, over } };
        };`),
      );
      expect(okBody(result)).toEqual({
        ascii: createHash('sha1').update('a'.repeat(11200000)).digest('hex'),
        over: 'RangeError: Digest input exceeds 33554432 bytes',
      });
    } finally {
      await roomy.close();
    }
  });

  it('lets setTimeout and clearTimeout work within the invocation', async () => {
    const result = await reactor.run(
      input(`module.exports = async () => {
        const order = [];
        const cancelled = setTimeout(() => order.push('cancelled'), 5);
        clearTimeout(cancelled);
        await new Promise((resolve) => setTimeout(() => { order.push('fired'); resolve(); }, 20));
        return { body: order, headers: {} };
      };`),
    );
    expect(okBody(result)).toEqual(['fired']);
  });

  it('routes every svc helper through the bridge with the right method, path and body', async () => {
    const bridge = new FakeBridge((req) => ({ status: req.method === 'POST' ? 201 : 200, body: { echoed: req.path } }));
    const result = await reactor.run(
      input(
        `module.exports = async ({ svc }) => {
          const out = [];
          out.push(await svc.applications.list({ size: 5, type: ['private', 'public'] }));
          out.push(await svc.applications.get('app 1'));
          await svc.applications.create({ name: 'n' });
          await svc.applications.update('a1', { name: 'm' });
          await svc.applications.delete('a1');
          await svc.applications.regenerate('a1');
          await svc.proxies.list();
          await svc.proxies.get('p1');
          await svc.proxies.create({ name: 'p' });
          await svc.proxies.update('p1', { name: 'q' });
          await svc.proxies.patch('p1', { name: null });
          await svc.proxies.delete('p1');
          await svc.logs.list({ entity_type: 'proxy' });
          out.push(await svc.request({ method: 'post', path: '/custom', body: [1, 2], query: { q: 'x' } }));
          return { body: out, headers: {} };
        };`,
        { svc: bridge },
      ),
    );
    expect(okBody(result)).toEqual([{ echoed: '/applications' }, { echoed: '/applications/app%201' }, { echoed: '/custom' }]);
    expect(bridge.calls).toEqual([
      { method: 'GET', path: '/applications', query: { size: '5', type: ['private', 'public'] } },
      { method: 'GET', path: '/applications/app%201' },
      { method: 'POST', path: '/applications', body: { name: 'n' } },
      { method: 'PUT', path: '/applications/a1', body: { name: 'm' } },
      { method: 'DELETE', path: '/applications/a1' },
      { method: 'POST', path: '/applications/a1/regenerate' },
      { method: 'GET', path: '/proxies' },
      { method: 'GET', path: '/proxies/p1' },
      { method: 'POST', path: '/proxies', body: { name: 'p' } },
      { method: 'PUT', path: '/proxies/p1', body: { name: 'q' } },
      { method: 'PATCH', path: '/proxies/p1', body: { name: null } },
      { method: 'DELETE', path: '/proxies/p1' },
      { method: 'GET', path: '/logs', query: { entity_type: 'proxy' } },
      { method: 'POST', path: '/custom', body: [1, 2], query: { q: 'x' } },
    ]);
  });

  it('rejects a non-2xx svc call with an Error carrying status and body', async () => {
    const bridge = new FakeBridge(() => ({ status: 404, body: { title: 'Not Found', detail: 'no such application' } }));
    const code = `module.exports = async ({ svc }) => {
      try { await svc.applications.get('missing'); return { body: 'resolved', headers: {} }; }
      catch (e) { return { body: { isError: e instanceof Error, status: e.status, body: e.body, message: e.message }, headers: {} }; }
    };`;
    expect(okBody(await reactor.run(input(code, { svc: bridge })))).toEqual({
      isError: true,
      status: 404,
      body: { title: 'Not Found', detail: 'no such application' },
      message: 'GET /applications/missing responded 404: no such application',
    });

    const uncaught = await reactor.run(input(`module.exports = async ({ svc }) => { await svc.proxies.list(); };`, { svc: bridge }));
    expect(uncaught).toMatchObject({ ok: false, status: 500, body: { proxy_error: { detail: 'GET /proxies responded 404: no such application' } } });
  });

  it('hides the bridge’s own failures behind a generic message', async () => {
    const bridge = new FakeBridge(() => {
      throw new Error('connect ECONNREFUSED 10.0.0.5:5432 at /srv/app/secret.js');
    });
    const result = await reactor.run(
      input(`module.exports = async ({ svc }) => { try { await svc.logs.list(); } catch (e) { return { body: [e.message, e.status], headers: {} }; } };`, {
        svc: bridge,
      }),
    );
    expect(okBody(result)).toEqual(['GET /logs failed: the service request could not be completed', 502]);
  });

  it('shows the transform a bridge refusal only when the bridge marks it as exposable', async () => {
    const bridge = new FakeBridge(() => {
      throw Object.assign(new Error('svc reaches only /applications, /proxies, /logs'), { expose: true, status: 403 });
    });
    const result = await reactor.run(
      input(
        `module.exports = async ({ svc }) => { try { await svc.request({ path: '/health' }); } catch (e) { return { body: [e.message, e.status], headers: {} }; } };`,
        { svc: bridge },
      ),
    );
    expect(okBody(result)).toEqual(['GET /health failed: svc reaches only /applications, /proxies, /logs', 403]);
  });

  it('leaves svc undefined when the host supplies no bridge', async () => {
    const result = await reactor.run(input(`module.exports = async (req) => ({ body: [typeof req.svc, 'svc' in req], headers: {} });`));
    expect(okBody(result)).toEqual(['undefined', false]);
  });

  it('compiles each distinct code once per isolate and reuses it on warm calls', async () => {
    const single = new Reactor({ poolSize: 1 });
    try {
      const code = `module.exports = async (req) => ({ body: req.args.body, headers: {} });`;
      await single.run(input(code));
      expect(single.stats()).toMatchObject({ processes: 1, compiledScripts: 1 });
      for (let i = 0; i < 5; i++) expect(okBody(await single.run(input(code)))).toEqual({ card: '4242' });
      expect(single.stats().compiledScripts).toBe(1);
      single.validate(code);
      await single.run(input(code + '\n// another version'));
      expect(single.stats()).toMatchObject({ processes: 1, compiledScripts: 2, replaced: 0, queued: 0 });
    } finally {
      await single.close();
    }
  });
});
