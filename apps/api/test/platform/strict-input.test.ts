import { as } from '../support/application-fixtures';
import { PATCH_TYPE, useStrictInput } from './strict-input.fixture';

/**
 * Strict input (issue 9 part 3), closed as classes across every endpoint and field: what the API accepts is exactly
 * what was sent, and what a write acknowledges is what a later read returns.
 */

describe('strict input', () => {
  const env = useStrictInput();
  const { send, expectRefused, validApplication, BODY_ENDPOINTS } = env;

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
      [
        'POST /applications',
        'POST',
        () => '/applications',
        (b) => `{"name":"n","type":"expiring","permissions":["token:read"],"expires_at":"${at(b)}"}`,
        'expires_at',
      ],
      [
        'POST /applications',
        'POST',
        () => '/applications',
        (b) =>
          `{"name":"n","type":"private","rules":[{"priority":1,"container":"/a/","transform":"mask","permissions":["token:read"],"description":"${at(b)}"}]}`,
        'rules[0].description',
      ],
      [
        'POST /applications',
        'POST',
        () => '/applications',
        (b) => `{"name":"n","type":"private","rules":[{"priority":1,"container":"/a${b}/","transform":"mask","permissions":["token:read"]}]}`,
        'rules[0].container',
      ],
      [
        'POST /applications',
        'POST',
        () => '/applications',
        (b) => `{"name":"n","type":"private","rules":[{"priority":1,"container":"/a/","transform":"${at(b)}","permissions":["token:read"]}]}`,
        'rules[0].transform',
      ],
      [
        'POST /applications',
        'POST',
        () => '/applications',
        (b) => `{"name":"n","type":"private","rules":[{"priority":1,"container":"/a/","transform":"mask","permissions":["${at(b)}"]}]}`,
        'rules[0].permissions[0]',
      ],
      [
        'POST /applications',
        'POST',
        () => '/applications',
        (b) => `{"name":"n","type":"expiring","rules":[${cond('"operator"', at(b)).replace(',"operator":"equals"', '')}]}`,
        'rules[0].conditions[0].operator',
      ],
      [
        'POST /applications',
        'POST',
        () => '/applications',
        (b) => `{"name":"n","type":"expiring","rules":[${cond('"attribute"', at(b)).replace('"attribute":"id",', '')}]}`,
        'rules[0].conditions[0].attribute',
      ],
      [
        'POST /applications',
        'POST',
        () => '/applications',
        (b) => `{"name":"n","type":"expiring","rules":[${cond('"extra"', 'v').replace('"value":"v"', `"value":"${at(b)}"`)}]}`.replace(',"extra":"v"', ''),
        'rules[0].conditions[0].value',
      ],
      [
        'POST /applications (a member name)',
        'POST',
        () => '/applications',
        (b) => `{"name":"n","type":"private","permissions":["token:read"],"${at(b)}":1}`,
        'body',
      ],
      ['PUT /applications/{id}', 'PUT', () => `/applications/${env.app.id}`, (b) => `{"name":"${at(b)}","permissions":["token:read"]}`, 'name'],
      [
        'PUT /applications/{id}',
        'PUT',
        () => `/applications/${env.app.id}`,
        (b) =>
          `{"name":"n","permissions":["token:read"],"rules":[{"priority":1,"container":"/a/","transform":"mask","permissions":["token:read"],"description":"${at(b)}"}]}`,
        'rules[0].description',
      ],
      ...(['POST', 'PUT', 'PATCH'] as const).flatMap((method): [string, string, () => string, (bad: string) => string, string][] => {
        const path = () => (method === 'POST' ? '/proxies' : `/proxies/${env.proxy.id}`);
        const endpoint = `${method} ${method === 'POST' ? '/proxies' : '/proxies/{id}'}`;
        const url = () => `${env.upstream.origin}/`;
        const code = (b: string) => `module.exports = async (req) => ({ body: '${at(b)}', headers: {} });`;
        return [
          [endpoint, method, path, (b) => `{"name":"${at(b)}","destination_url":"${url()}"}`, 'name'],
          [endpoint, method, path, (b) => `{"name":"n","destination_url":"${url()}${at(b)}"}`, 'destination_url'],
          [endpoint, method, path, (b) => `{"name":"n","destination_url":"${url()}","request_transform":{"code":"${code(b)}"}}`, 'request_transform.code'],
          [endpoint, method, path, (b) => `{"name":"n","destination_url":"${url()}","response_transform":{"code":"${code(b)}"}}`, 'response_transform.code'],
          [endpoint, method, path, (b) => `{"name":"n","destination_url":"${url()}","application":{"id":"${at(b)}"}}`, 'application.id'],
          [endpoint, method, path, (b) => `{"name":"n","destination_url":"${url()}","configuration":{"k":"${at(b)}"}}`, 'configuration.k'],
          [
            `${endpoint} (a configuration key)`,
            method,
            path,
            (b) => `{"name":"n","destination_url":"${url()}","configuration":{"${at(b)}":"v"}}`,
            'configuration',
          ],
        ];
      }),
    ];
    const cases = FIELDS.flatMap(([endpoint, method, path, body, field]) =>
      BAD.map(([what, bad]) => [endpoint, field, what, method, path, body, bad] as const),
    );

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
        destination_url: `${env.upstream.origin}/${encodeURIComponent('🔑')}/`,
        request_transform: { code: `module.exports = async (req) => ({ body: '${text}', headers: {} });` },
        configuration: { [text]: text },
      };
      const created = await as(env.t, env.admin.key).post('/proxies', body).expect(201);
      const read = await as(env.t, env.admin.key).get(`/proxies/${created.body.id}`).expect(200);
      for (const field of ['name', 'destination_url', 'request_transform', 'configuration']) {
        expect(read.body[field]).toEqual(body[field as keyof typeof body]);
        expect(created.body[field]).toEqual(body[field as keyof typeof body]);
      }
      const list = await as(env.t, env.admin.key)
        .get(`/proxies?name=${encodeURIComponent('🔑')}`)
        .expect(200);
      expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([created.body.id]);
    });
  });
});
