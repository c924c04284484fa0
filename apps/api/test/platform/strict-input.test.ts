import { request as httpRequest, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestApp } from '@gatehouse/test-support/test-app';
import { startTestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { ANY_UUID, as, Caller, CONTAINER_RULE, createApplication, newTenant, rowCounts } from '../support/application-fixtures';

/**
 * Strict input (issue 9 part 3), closed as classes across every endpoint and field: what the API accepts is exactly
 * what was sent, and what a write acknowledges is what a later read returns.
 */

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: Record<string, unknown> & { errors?: Record<string, string[]> };
}

const PATCH_TYPE = 'application/merge-patch+json';

describe('strict input', () => {
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

  describe('JSON bodies are strict UTF-8: invalid bytes are a 400, never stored as U+FFFD', () => {
    const SEQUENCES: [string, number[]][] = [
      ['an overlong "/" (C0 AF)', [0xc0, 0xaf]],
      ['an overlong NUL (C0 80)', [0xc0, 0x80]],
      ['a three-byte overlong "/" (E0 80 AF)', [0xe0, 0x80, 0xaf]],
      ['a four-byte overlong (F0 80 80 AF)', [0xf0, 0x80, 0x80, 0xaf]],
      ['a CESU-8 high surrogate (ED A0 80)', [0xed, 0xa0, 0x80]],
      ['a CESU-8 surrogate pair for U+1F511', [0xed, 0xa0, 0xbd, 0xed, 0xb4, 0x91]],
      ['a truncated three-byte sequence (E2 82)', [0xe2, 0x82]],
      ['a truncated four-byte sequence (F0 9F 94)', [0xf0, 0x9f, 0x94]],
      ['a stray continuation byte (80)', [0x80]],
      ['a stray 0xFF', [0xff]],
      ['a stray 0xFE', [0xfe]],
      ['a code point above U+10FFFF (F4 90 80 80)', [0xf4, 0x90, 0x80, 0x80]],
      ['a five-byte form (F8 88 80 80 80)', [0xf8, 0x88, 0x80, 0x80, 0x80]],
      ['Latin-1 "é" (E9)', [0xe9]],
    ];
    const cases = BODY_ENDPOINTS.flatMap(([endpoint, method, path, valid]) =>
      SEQUENCES.map(([sequence, bytes]) => [endpoint, sequence, method, path, valid, bytes] as const),
    );

    it.each(cases)('%s: %s in the name is a 400', async (_endpoint, _sequence, method, path, valid, bytes) => {
      const [before, after] = valid().split('"name":"n"');
      const body = Buffer.concat([Buffer.from(`${before}"name":"a`), Buffer.from(bytes), Buffer.from(`b"${after}`)]);
      const reply = await expectRefused(400, () => send(method, path(), { body }));
      expect(reply.body.detail).toBe('The request body is not valid UTF-8');
    });

    it.each(BODY_ENDPOINTS)('%s: invalid UTF-8 outside any string (between members) is a 400 too', async (_, method, path, valid) => {
      const text = valid();
      const body = Buffer.concat([Buffer.from(text.slice(0, -1)), Buffer.from([0x20, 0xc0, 0xa0]), Buffer.from('}')]);
      await expectRefused(400, () => send(method, path(), { body }));
    });

    it('valid multi-byte UTF-8 (2, 3 and 4 bytes) is stored and read back exactly, with and without a byte order mark', async () => {
      const name = 'é€🔑 ключ';
      for (const prefix of [Buffer.alloc(0), Buffer.from([0xef, 0xbb, 0xbf])]) {
        const body = Buffer.concat([prefix, Buffer.from(`{"name":"${name}","type":"private","permissions":["token:read"]}`, 'utf8')]);
        const created = await send('POST', '/applications', { body });
        expect(created.status).toBe(201);
        expect(created.body.name).toBe(name);
        expect((await send('GET', `/applications/${created.body.id}`)).body.name).toBe(name);
      }
    });
  });

  describe('a charset other than utf-8 is a 415', () => {
    const REFUSED = ['latin1', 'iso-8859-1', 'ISO-8859-1', 'utf-16', 'utf-16le', 'UTF-16BE', 'us-ascii', 'utf8', 'utf-32', 'windows-1252', '"utf-16"', ''];
    const cases = BODY_ENDPOINTS.flatMap(([endpoint, method, path, valid]) => REFUSED.map((charset) => [endpoint, charset, method, path, valid] as const));

    it.each(cases)('%s with charset=%s is a 415', async (_, charset, method, path, valid) => {
      const media = method === 'PATCH' ? PATCH_TYPE : 'application/json';
      const reply = await expectRefused(415, () => send(method, path(), { body: valid(), type: `${media}; charset=${charset}` }));
      expect(reply.body.detail).toMatch(/UTF-8/);
    });

    it.each(['utf-8', 'UTF-8', '"utf-8"', 'Utf-8'])('charset=%s is accepted on every endpoint', async (charset) => {
      for (const [, method, path, valid] of BODY_ENDPOINTS) {
        const media = method === 'PATCH' ? PATCH_TYPE : 'application/json';
        const reply = await send(method, path(), { body: valid(), type: `${media}; charset=${charset}` });
        expect([200, 201]).toContain(reply.status);
      }
    });

    it('a UTF-16 body is a 415, not decoded', async () => {
      const body = Buffer.from(`\ufeff${validApplication}`, 'utf16le');
      await expectRefused(415, () => send('POST', '/applications', { body, type: 'application/json; charset=utf-16' }));
    });
  });

  describe('NUL characters and unpaired surrogates are a 400 in every string, value or member name', () => {
    // `\\ud800` is the JSON escape of a lone high surrogate: valid JSON, valid UTF-8, no UTF-8 form once decoded.
    const BAD = [
      ['a lone high surrogate', '\\ud800'],
      ['a lone low surrogate', '\\udc00'],
      ['reversed surrogates', '\\udc00\\ud800'],
      ['a high surrogate before a letter', '\\ud83dX'],
      ['a NUL', '\\u0000'],
    ] as const;
    const at = (value: string) => `x${value}y`;
    const cond = (field: string, value: string) =>
      `{"priority":1,"transform":"mask","permissions":["token:read"],"conditions":[{"attribute":"id","operator":"equals","value":"v",${field}:"${value}"}]}`;
    // [endpoint, method, path, body with the bad text at one field, the field path named]
    const FIELDS: [string, string, () => string, (bad: string) => string, string][] = [
      ['POST /applications', 'POST', () => '/applications', (b) => `{"name":"${at(b)}","type":"private","permissions":["token:read"]}`, 'name'],
      ['POST /applications', 'POST', () => '/applications', (b) => `{"name":"n","type":"${at(b)}","permissions":["token:read"]}`, 'type'],
      ['POST /applications', 'POST', () => '/applications', (b) => `{"name":"n","type":"private","permissions":["token:read","${at(b)}"]}`, 'permissions[1]'],
      ['POST /applications', 'POST', () => '/applications', (b) => `{"name":"n","type":"expiring","permissions":["token:read"],"expires_at":"${at(b)}"}`, 'expires_at'],
      ['POST /applications', 'POST', () => '/applications', (b) => `{"name":"n","type":"private","rules":[{"priority":1,"container":"/a/","transform":"mask","permissions":["token:read"],"description":"${at(b)}"}]}`, 'rules[0].description'],
      ['POST /applications', 'POST', () => '/applications', (b) => `{"name":"n","type":"private","rules":[{"priority":1,"container":"/a${b}/","transform":"mask","permissions":["token:read"]}]}`, 'rules[0].container'],
      ['POST /applications', 'POST', () => '/applications', (b) => `{"name":"n","type":"private","rules":[{"priority":1,"container":"/a/","transform":"${at(b)}","permissions":["token:read"]}]}`, 'rules[0].transform'],
      ['POST /applications', 'POST', () => '/applications', (b) => `{"name":"n","type":"private","rules":[{"priority":1,"container":"/a/","transform":"mask","permissions":["${at(b)}"]}]}`, 'rules[0].permissions[0]'],
      ['POST /applications', 'POST', () => '/applications', (b) => `{"name":"n","type":"expiring","rules":[${cond('"operator"', at(b)).replace(',"operator":"equals"', '')}]}`, 'rules[0].conditions[0].operator'],
      ['POST /applications', 'POST', () => '/applications', (b) => `{"name":"n","type":"expiring","rules":[${cond('"attribute"', at(b)).replace('"attribute":"id",', '')}]}`, 'rules[0].conditions[0].attribute'],
      ['POST /applications', 'POST', () => '/applications', (b) => `{"name":"n","type":"expiring","rules":[${cond('"extra"', 'v').replace('"value":"v"', `"value":"${at(b)}"`)}]}`.replace(',"extra":"v"', ''), 'rules[0].conditions[0].value'],
      ['POST /applications (a member name)', 'POST', () => '/applications', (b) => `{"name":"n","type":"private","permissions":["token:read"],"${at(b)}":1}`, 'body'],
      ['PUT /applications/{id}', 'PUT', () => `/applications/${app.id}`, (b) => `{"name":"${at(b)}","permissions":["token:read"]}`, 'name'],
      ['PUT /applications/{id}', 'PUT', () => `/applications/${app.id}`, (b) => `{"name":"n","permissions":["token:read"],"rules":[{"priority":1,"container":"/a/","transform":"mask","permissions":["token:read"],"description":"${at(b)}"}]}`, 'rules[0].description'],
      ...(['POST', 'PUT', 'PATCH'] as const).flatMap((method): [string, string, () => string, (bad: string) => string, string][] => {
        const path = () => (method === 'POST' ? '/proxies' : `/proxies/${proxy.id}`);
        const endpoint = `${method} ${method === 'POST' ? '/proxies' : '/proxies/{id}'}`;
        const url = () => `${upstream.origin}/`;
        const code = (b: string) => `module.exports = async (req) => ({ body: '${at(b)}', headers: {} });`;
        return [
          [endpoint, method, path, (b) => `{"name":"${at(b)}","destination_url":"${url()}"}`, 'name'],
          [endpoint, method, path, (b) => `{"name":"n","destination_url":"${url()}${at(b)}"}`, 'destination_url'],
          [endpoint, method, path, (b) => `{"name":"n","destination_url":"${url()}","request_transform":{"code":"${code(b)}"}}`, 'request_transform.code'],
          [endpoint, method, path, (b) => `{"name":"n","destination_url":"${url()}","response_transform":{"code":"${code(b)}"}}`, 'response_transform.code'],
          [endpoint, method, path, (b) => `{"name":"n","destination_url":"${url()}","application":{"id":"${at(b)}"}}`, 'application.id'],
          [endpoint, method, path, (b) => `{"name":"n","destination_url":"${url()}","configuration":{"k":"${at(b)}"}}`, 'configuration.k'],
          [`${endpoint} (a configuration key)`, method, path, (b) => `{"name":"n","destination_url":"${url()}","configuration":{"${at(b)}":"v"}}`, 'configuration'],
        ];
      }),
    ];
    const cases = FIELDS.flatMap(([endpoint, method, path, body, field]) => BAD.map(([what, bad]) => [endpoint, field, what, method, path, body, bad] as const));

    it.each(cases)('%s: %s holding %s is a 400 naming it', async (_endpoint, field, _what, method, path, body, bad) => {
      const reply = await expectRefused(400, () => send(method, path(), { body: body(bad) }), [field]);
      expect(reply.body.errors![field]!.join(' ')).toMatch(/NUL characters or unpaired surrogates/);
    });

    it.each([
      ['an encoded lone surrogate (CESU-8)', '%ED%A0%80'],
      ['an invalid byte', '%FF'],
      ['an overlong "/"', '%C0%AF'],
      ['a truncated sequence', '%E2%82'],
      ['a bad percent escape', '%G1'],
    ])('a query value holding %s is a 400 naming the parameter', async (_, encoded) => {
      for (const path of ['/proxies?name=', '/logs?entity_id=', '/applications?type=', '/permissions?application_type=']) {
        const reply = await expectRefused(400, () => send('GET', `${path}a${encoded}`));
        expect(Object.keys(reply.body.errors ?? {})).toHaveLength(1);
      }
    });

    it('a query parameter name that is not valid UTF-8 is a 400', async () => {
      await expectRefused(400, () => send('GET', '/proxies?%FF=1'));
    });

    it('well-formed astral characters (a valid surrogate pair) are fine everywhere and read back exactly', async () => {
      const text = 'κλειδί 🔑 鍵';
      const body = {
        name: text,
        destination_url: `${upstream.origin}/${encodeURIComponent('🔑')}/`,
        request_transform: { code: `module.exports = async (req) => ({ body: '${text}', headers: {} });` },
        configuration: { [text]: text },
      };
      const created = await as(t, admin.key).post('/proxies', body).expect(201);
      const read = await as(t, admin.key).get(`/proxies/${created.body.id}`).expect(200);
      for (const field of ['name', 'destination_url', 'request_transform', 'configuration']) {
        expect(read.body[field]).toEqual(body[field as keyof typeof body]);
        expect(created.body[field]).toEqual(body[field as keyof typeof body]);
      }
      const list = await as(t, admin.key).get(`/proxies?name=${encodeURIComponent('🔑')}`).expect(200);
      expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([created.body.id]);
    });
  });

  describe('where an object is expected, anything else is a 400 naming the field (never read as absent)', () => {
    const NOT_OBJECTS: [string, string][] = [
      ['an empty array', '[]'],
      ['an array holding the object', '[{"id":"7d0f4a8e-1c2b-4d3e-9f60-123456789abc","code":"module.exports = async (r) => r"}]'],
      ['a string', '"x"'],
      ['a number', '1'],
      ['true', 'true'],
      ['false', 'false'],
    ];
    const PROXY_OBJECT_FIELDS = ['request_transform', 'response_transform', 'application', 'configuration', 'rate_limit'];
    const proxyCases = (['POST', 'PUT', 'PATCH'] as const).flatMap((method) =>
      PROXY_OBJECT_FIELDS.flatMap((field) => NOT_OBJECTS.map(([what, json]) => [`${method} proxies`, field, what, method, field, json] as const)),
    );

    it.each(proxyCases)('%s: %s as %s is a 400', async (_, _field, _what, method, field, json) => {
      const path = method === 'POST' ? '/proxies' : `/proxies/${proxy.id}`;
      const body = method === 'PATCH' ? `{"${field}":${json}}` : `{"name":"n","destination_url":"${upstream.origin}/","${field}":${json}}`;
      const reply = await expectRefused(400, () => send(method, path, { body }), [field]);
      expect(reply.body.errors![field]).toContain('must be an object');
    });

    const RULE = '{"priority":1,"container":"/a/","transform":"mask","permissions":["token:read"]}';
    const CONDITION = '{"attribute":"id","operator":"equals","value":"v"}';
    const applicationCases: [string, string, string, string][] = NOT_OBJECTS.flatMap(([what, json]) => [
      ['a rule', what, `{"name":"n","type":"private","rules":[${json}]}`, 'rules[0]'],
      ['a rule (PUT)', what, `{"name":"n","rules":[${json}]}`, 'rules[0]'],
      ['a condition', what, `{"name":"n","type":"expiring","rules":[{"priority":1,"transform":"mask","permissions":["token:read"],"conditions":[${json}]}]}`, 'rules[0].conditions[0]'],
      ['rate_limit', what, `{"name":"n","type":"private","permissions":["token:read"],"rate_limit":${json}}`, 'rate_limit'],
      ['rate_limit (PUT)', what, `{"name":"n","permissions":["token:read"],"rate_limit":${json}}`, 'rate_limit'],
    ] as [string, string, string, string][]).map(([field, what, body, path]) => [field, what, body, path]);

    it.each(applicationCases)('%s as %s is a 400', async (field, _what, body, path) => {
      const put = field.endsWith('(PUT)');
      // An array item that is itself an array is named by its list (class-validator reports it there).
      const named = body.includes('[[') ? path.replace(/\[0\]$/, '') : path;
      await expectRefused(400, () => send(put ? 'PUT' : 'POST', put ? `/applications/${app.id}` : '/applications', { body }), [named]);
    });

    it.each([
      ['rules as an object', '{"name":"n","type":"private","rules":' + RULE + '}', 'rules'],
      ['conditions as an object', `{"name":"n","type":"expiring","rules":[{"priority":1,"transform":"mask","permissions":["token:read"],"conditions":${CONDITION}}]}`, 'rules[0].conditions'],
    ])('a list given as an object (%s) is a 400', async (_, body, field) => {
      await expectRefused(400, () => send('POST', '/applications', { body }), [field]);
    });

    it.each([
      ['null', 'null'],
      ['an array', '[]'],
      ['an array of a valid patch', '[{"name":"x"}]'],
      ['a string', '"x"'],
      ['a number', '1'],
      ['true', 'true'],
    ])('a PATCH whose body is %s is a 400', async (_, body) => {
      const reply = await expectRefused(400, () => send('PATCH', `/proxies/${proxy.id}`, { body }));
      expect(reply.body.detail).toBe('The request body must be a JSON object');
    });

    it('a PATCH without a body is a 400', async () => {
      await expectRefused(400, () => send('PATCH', `/proxies/${proxy.id}`, { headers: { 'content-type': PATCH_TYPE } }));
    });

    it.each(BODY_ENDPOINTS)('%s: a top-level array, string, number or null is a 400', async (_, method, path) => {
      for (const body of ['[]', '"x"', '1', 'null', 'false']) {
        const reply = await expectRefused(400, () => send(method, path(), { body }));
        expect(reply.body.detail).toBe('The request body must be a JSON object');
      }
    });
  });

  describe('a member name given twice in one object is a 400 naming it (JSON.parse would keep the last silently)', () => {
    const url = () => `${upstream.origin}/`;
    it.each([
      ['at the top level', 'POST', () => '/applications', () => '{"name":"a","type":"private","permissions":["token:read"],"name":"b"}', 'name'],
      ['spelt with an escape', 'POST', () => '/applications', () => '{"name":"a","type":"private","permissions":["token:read"],"n\\u0061me":"b"}', 'name'],
      ['inside a rule', 'PUT', () => `/applications/${app.id}`, () => '{"name":"a","rules":[{"priority":1,"container":"/a/","transform":"mask","permissions":["token:read"]},{"priority":2,"priority":3,"container":"/b/","transform":"mask","permissions":["token:read"]}]}', 'rules[1].priority'],
      ['inside a condition', 'POST', () => '/applications', () => '{"name":"a","type":"expiring","rules":[{"priority":1,"transform":"mask","permissions":["token:read"],"conditions":[{"attribute":"id","operator":"equals","value":"x","value":"y"}]}]}', 'rules[0].conditions[0].value'],
      ['inside a configuration', 'POST', () => '/proxies', () => `{"name":"p","destination_url":"${url()}","configuration":{"k":"1","k":"2"}}`, 'configuration.k'],
      ['__proto__ twice in a configuration', 'PUT', () => `/proxies/${proxy.id}`, () => `{"name":"p","destination_url":"${url()}","configuration":{"__proto__":"1","__proto__":"2"}}`, 'configuration.__proto__'],
      ['in a merge patch', 'PATCH', () => `/proxies/${proxy.id}`, () => '{"request_transform":{"code":"a","code":null}}', 'request_transform.code'],
    ])('%s', async (_, method, path, body, field) => {
      const reply = await expectRefused(400, () => send(method, path(), { body: body() }), [field]);
      expect(reply.body.errors![field]).toEqual(['appears more than once in its object']);
    });

    it('the same name in sibling objects, or as a value, is no duplicate', async () => {
      // A value holding quotes, colons and braces that look like members must not confuse the scan.
      const tricky = JSON.stringify('"name": 1, {"priority": [2]} \\');
      const body = `{"name":"name","type":"private","rules":[{"priority":1,"container":"/a/","transform":"mask","permissions":["token:read"],"description":${tricky}},{"priority":2,"container":"/b/","transform":"mask","permissions":["token:read"]}]}`;
      const created = await send('POST', '/applications', { body });
      expect(created.status).toBe(201);
      expect((created.body.rules as { description?: string }[])[0]!.description).toBe(JSON.parse(tricky));
    });
  });

  describe('configuration keys named like Object.prototype members are ordinary keys, end to end', () => {
    const PROTOTYPE_NAMES = [...Object.getOwnPropertyNames(Object.prototype), 'prototype'];
    const configuration = Object.fromEntries(PROTOTYPE_NAMES.map((name) => [name, `value of ${name}`]));

    /** JSON text with every key, `__proto__` included (an object literal would set the prototype instead). */
    const configurationJson = (extra: Record<string, string> = {}) => JSON.stringify({ ...configuration, ...extra });

    function expectConfiguration(actual: unknown, expected: Record<string, string>): void {
      expect(actual).not.toBeNull();
      expect(Object.entries(actual as object).sort()).toEqual(Object.entries(expected).sort());
    }

    it('covers __proto__, constructor, toString, hasOwnProperty and valueOf', () => {
      expect(PROTOTYPE_NAMES).toEqual(expect.arrayContaining(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']));
      expect(Object.keys(configuration)).toContain('__proto__');
    });

    it('a create returns them, and GET, the list, PUT and PATCH keep every one', async () => {
      const created = await send('POST', '/proxies', { body: `{"name":"protos","destination_url":"${upstream.origin}/","configuration":${configurationJson()}}` });
      expect(created.status).toBe(201);
      expectConfiguration(created.body.configuration, configuration);
      const id = created.body.id as string;
      expectConfiguration((await send('GET', `/proxies/${id}`)).body.configuration, configuration);
      const listed = (await send('GET', `/proxies?id=${id}`)).body.data as { configuration: unknown }[];
      expectConfiguration(listed[0]!.configuration, configuration);

      const replaced = await send('PUT', `/proxies/${id}`, { body: `{"name":"protos","destination_url":"${upstream.origin}/","configuration":${configurationJson({ toString: 'replaced' })}}` });
      expect(replaced.status).toBe(200);
      expectConfiguration(replaced.body.configuration, { ...configuration, toString: 'replaced' });

      // A merge patch: null removes one member, others are set; the rest is kept.
      const patched = await send('PATCH', `/proxies/${id}`, { body: '{"configuration":{"valueOf":null,"__proto__":"patched","hasOwnProperty":"patched"}}' });
      expect(patched.status).toBe(200);
      const { valueOf: _removed, ...rest } = configuration;
      const expected = { ...rest, toString: 'replaced', hasOwnProperty: 'patched' };
      Object.defineProperty(expected, '__proto__', { value: 'patched', enumerable: true });
      expectConfiguration(patched.body.configuration, expected);
      expectConfiguration((await send('GET', `/proxies/${id}`)).body.configuration, expected);
      expect(({} as Record<string, unknown>).patched).toBeUndefined();
    });

    it('a transform receives them as the configuration it was given', async () => {
      const code = `module.exports = async (req) => {
        const c = req.configuration;
        return { body: { entries: Object.entries(c), proto: c.__proto__, ctor: c.constructor, str: c.toString, absent: typeof c.isPrototypeOf }, headers: {} };
      };`;
      const body = JSON.stringify({ name: 'echo', destination_url: `${upstream.origin}/`, require_auth: false, response_transform: { code } }).replace(
        /}$/,
        `,"configuration":${JSON.stringify({ __proto__: null, toString: 'data', constructor: 'data too' }).replace('{', '{"__proto__":"proto value",')}}`,
      );
      const created = await send('POST', '/proxies', { body });
      expect(created.status).toBe(201);
      const invoked = await t.http().get('/proxy').set('svc-proxy-key', created.body.key as string).expect(200);
      expect(invoked.body.proto).toBe('proto value');
      expect(invoked.body.ctor).toBe('data too');
      expect(invoked.body.str).toBe('data');
      expect(new Map(invoked.body.entries)).toEqual(new Map([['__proto__', 'proto value'], ['toString', 'data'], ['constructor', 'data too']]));
    });

    it('outside a configuration, __proto__, constructor and prototype remain unknown fields (400, never dropped)', async () => {
      await expectRefused(400, () => send('POST', '/applications', { body: '{"name":"n","type":"private","permissions":["token:read"],"prototype":1}' }), ['prototype']);
      await expectRefused(400, () => send('PUT', `/applications/${app.id}`, { body: '{"name":"n","permissions":["token:read"],"rules":[{"priority":1,"container":"/a/","transform":"mask","permissions":["token:read"],"prototype":{}}]}' }), ['rules[0].prototype']);
      await expectRefused(400, () => send('POST', '/proxies', { body: `{"name":"n","destination_url":"${upstream.origin}/","__proto__":{"x":1}}` }), ['__proto__']);
      await expectRefused(400, () => send('PATCH', `/proxies/${proxy.id}`, { body: '{"application":{"constructor":{"prototype":{"x":1}}}}' }), ['application.constructor']);
      expect(({} as Record<string, unknown>).x).toBeUndefined();
    });
  });

  describe('GET, HEAD and DELETE take no body: one sent anyway is a 400, never ignored', () => {
    const BODILESS: [string, string, () => string][] = [
      ['GET', '/applications', () => '/applications'],
      ['GET', '/applications/key', () => '/applications/key'],
      ['GET', '/applications/{id}', () => `/applications/${app.id}`],
      ['GET', '/proxies', () => '/proxies'],
      ['GET', '/proxies/{id}', () => `/proxies/${proxy.id}`],
      ['GET', '/logs', () => '/logs'],
      ['GET', '/logs/entity-types', () => '/logs/entity-types'],
      ['GET', '/permissions', () => '/permissions?application_type=private'],
      ['GET', '/health/live', () => '/health/live'],
      ['DELETE', '/applications/{id}', () => `/applications/${app.id}`],
      ['DELETE', '/proxies/{id}', () => `/proxies/${proxy.id}`],
    ];

    it.each(BODILESS)('%s %s with a JSON body is a 400, and nothing is deleted', async (method, _route, path) => {
      const reply = await expectRefused(400, () => send(method, path(), { body: '{"filter":{"name":"x"}}' }));
      expect(reply.body.detail).toBe(`A ${method} request takes no body`);
    });

    it.each(BODILESS)('%s %s with a body of another type, or chunked, is a 400 too', async (method, _route, path) => {
      await expectRefused(400, () => send(method, path(), { body: 'confirm=yes', type: 'application/x-www-form-urlencoded' }));
      await expectRefused(400, () => send(method, path(), { body: 'x', type: 'text/plain', headers: { 'transfer-encoding': 'chunked' } }));
    });

    it('HEAD with a body is a 400', async () => {
      expect((await send('HEAD', '/applications', { body: '{}' })).status).toBe(400);
    });

    it('an empty body (Content-Length: 0, or chunked with no chunk) is no body: answered as usual', async () => {
      expect((await send('GET', '/applications', { headers: { 'content-length': '0' } })).status).toBe(200);
      expect((await send('GET', '/applications', { headers: { 'transfer-encoding': 'chunked' } })).status).toBe(200);
      const doomed = await createApplication(t, admin.key, { name: 'doomed', type: 'private', permissions: ['token:read'] });
      expect((await send('DELETE', `/applications/${doomed.id}`, { headers: { 'transfer-encoding': 'chunked' } })).status).toBe(204);
    });

    it('a body over the size limit is the same 400, declared or chunked, and the connection stays usable', async () => {
      const big = `{"a":"${'x'.repeat(1024 * 1024)}"}`;
      await expectRefused(400, () => send('GET', '/applications', { body: big }));
      await expectRefused(400, () => send('DELETE', `/applications/${app.id}`, { body: big, headers: { 'transfer-encoding': 'chunked' } }));
      expect((await send('GET', '/applications')).status).toBe(200);
    });

    it('/proxy passes a GET body on to the destination: the data plane is not this API', async () => {
      const open = await as(t, admin.key).post('/proxies', { name: 'open', destination_url: `${upstream.origin}/`, require_auth: false });
      const res = await t.http().get('/proxy').set('svc-proxy-key', open.body.key).set('content-type', 'application/json').send('{"a":1}');
      expect([res.status, res.text]).toEqual([200, '{"upstream":true}']);
    });
  });

  describe('query strings: every unknown parameter is a 400, integers are plain decimal digits', () => {
    // Every management route, with and without a query DTO of its own.
    const ROUTES: [string, () => string][] = [
      ['GET', () => '/applications'],
      ['GET', () => '/applications/key'],
      ['GET', () => `/applications/${app.id}`],
      ['GET', () => '/proxies'],
      ['GET', () => `/proxies/${proxy.id}`],
      ['GET', () => '/logs'],
      ['GET', () => '/logs/entity-types'],
      ['GET', () => '/permissions'],
      ['DELETE', () => `/applications/${app.id}`],
      ['DELETE', () => `/proxies/${proxy.id}`],
      ['POST', () => `/applications/${app.id}/regenerate`],
      ['POST', () => '/applications'],
      ['PUT', () => `/proxies/${proxy.id}`],
      ['PATCH', () => `/proxies/${proxy.id}`],
    ];
    const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', 'foo', 'PAGE', 'page[]', 'id[0]', '__proto__[polluted]'];
    const cases = ROUTES.flatMap(([method, path]) => NAMES.map((name) => [method, path, name] as const));

    it.each(cases)('%s %p with ?%s=1 is a 400 naming it, and changes nothing', async (method, path, name) => {
      const body = method === 'POST' && path() === '/applications' ? validApplication : method === 'PUT' ? validProxy() : method === 'PATCH' ? '{"name":"n"}' : undefined;
      const reply = await expectRefused(400, () => send(method, `${path()}?${encodeURIComponent(name)}=1`, { body }), [name]);
      expect(reply.body.errors![name]).toEqual(['is not allowed']);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    const NOT_INTEGERS = ['0x10', '1e1', '+1', '%201', '1%20', '1.0', '1.5', '-1', '0b1', '0o7', '1_0', 'Infinity', 'NaN', '', '%EF%BC%91', '9999999999999999', 'true', '1,2'];
    const integerCases = ['/applications', '/proxies', '/logs'].flatMap((path) =>
      ['page', 'size'].flatMap((parameter) => NOT_INTEGERS.map((value) => [path, parameter, value] as const)),
    );

    it.each(integerCases)('GET %s?%s=%s is a 400', async (path, parameter, value) => {
      await expectRefused(400, () => send('GET', `${path}?${parameter}=${value}`), [parameter]);
    });

    it.each(['/applications', '/proxies', '/logs'])('GET %s takes plain decimal digits (leading zeros too)', async (path) => {
      const reply = await send('GET', `${path}?page=01&size=002`);
      expect(reply.status).toBe(200);
      expect(reply.body.pagination).toMatchObject({ page_number: 1, page_size: 2 });
    });

    it('a repeated scalar parameter is a 400; repeated array filters are fine', async () => {
      await expectRefused(400, () => send('GET', '/proxies?page=1&page=2'), ['page']);
      await expectRefused(400, () => send('GET', '/proxies?name=a&name=b'), ['name']);
      expect((await send('GET', `/proxies?id=${proxy.id}&id=${ANY_UUID}`)).status).toBe(200);
    });

    it('the /proxy data plane forwards its query string, whatever the names', async () => {
      const seen: string[] = [];
      const echo = await startUpstream((req, res) => {
        seen.push(req.url!);
        res.end('ok');
      });
      try {
        const created = await as(t, admin.key).post('/proxies', { name: 'q', destination_url: `${echo.origin}/`, require_auth: false }).expect(201);
        await t.http().get(`/proxy/x?__proto__=1&constructor=2&page=0x10&svc-proxy-key=${created.body.key}`).expect(200);
        expect(seen).toEqual(['/x?__proto__=1&constructor=2&page=0x10']);
      } finally {
        await echo.stop();
      }
    });
  });
});
