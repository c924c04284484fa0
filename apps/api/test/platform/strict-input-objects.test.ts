import { PATCH_TYPE, useStrictInput } from './strict-input.fixture';

/** Strict input (issue 9 part 3): see strict-input.test.ts. */

describe('strict input', () => {
  const env = useStrictInput();
  const { send, expectRefused, BODY_ENDPOINTS } = env;

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
      const path = method === 'POST' ? '/proxies' : `/proxies/${env.proxy.id}`;
      const body = method === 'PATCH' ? `{"${field}":${json}}` : `{"name":"n","destination_url":"${env.upstream.origin}/","${field}":${json}}`;
      const reply = await expectRefused(400, () => send(method, path, { body }), [field]);
      expect(reply.body.errors![field]).toContain('must be an object');
    });

    const RULE = '{"priority":1,"container":"/a/","transform":"mask","permissions":["token:read"]}';
    const CONDITION = '{"attribute":"id","operator":"equals","value":"v"}';
    const applicationCases: [string, string, string, string][] = NOT_OBJECTS.flatMap(
      ([what, json]) =>
        [
          ['a rule', what, `{"name":"n","type":"private","rules":[${json}]}`, 'rules[0]'],
          ['a rule (PUT)', what, `{"name":"n","rules":[${json}]}`, 'rules[0]'],
          [
            'a condition',
            what,
            `{"name":"n","type":"expiring","rules":[{"priority":1,"transform":"mask","permissions":["token:read"],"conditions":[${json}]}]}`,
            'rules[0].conditions[0]',
          ],
          ['rate_limit', what, `{"name":"n","type":"private","permissions":["token:read"],"rate_limit":${json}}`, 'rate_limit'],
          ['rate_limit (PUT)', what, `{"name":"n","permissions":["token:read"],"rate_limit":${json}}`, 'rate_limit'],
        ] as [string, string, string, string][],
    ).map(([field, what, body, path]) => [field, what, body, path]);

    it.each(applicationCases)('%s as %s is a 400', async (field, _what, body, path) => {
      const put = field.endsWith('(PUT)');
      // An array item that is itself an array is named by its list (class-validator reports it there).
      const named = body.includes('[[') ? path.replace(/\[0\]$/, '') : path;
      await expectRefused(400, () => send(put ? 'PUT' : 'POST', put ? `/applications/${env.app.id}` : '/applications', { body }), [named]);
    });

    it.each([
      ['rules as an object', '{"name":"n","type":"private","rules":' + RULE + '}', 'rules'],
      [
        'conditions as an object',
        `{"name":"n","type":"expiring","rules":[{"priority":1,"transform":"mask","permissions":["token:read"],"conditions":${CONDITION}}]}`,
        'rules[0].conditions',
      ],
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
      const reply = await expectRefused(400, () => send('PATCH', `/proxies/${env.proxy.id}`, { body }));
      expect(reply.body.detail).toBe('The request body must be a JSON object');
    });

    it('a PATCH without a body is a 400', async () => {
      await expectRefused(400, () => send('PATCH', `/proxies/${env.proxy.id}`, { headers: { 'content-type': PATCH_TYPE } }));
    });

    it.each(BODY_ENDPOINTS)('%s: a top-level array, string, number or null is a 400', async (_, method, path) => {
      for (const body of ['[]', '"x"', '1', 'null', 'false']) {
        const reply = await expectRefused(400, () => send(method, path(), { body }));
        expect(reply.body.detail).toBe('The request body must be a JSON object');
      }
    });
  });

  describe('a member name given twice in one object is a 400 naming it (JSON.parse would keep the last silently)', () => {
    const url = () => `${env.upstream.origin}/`;
    it.each([
      ['at the top level', 'POST', () => '/applications', () => '{"name":"a","type":"private","permissions":["token:read"],"name":"b"}', 'name'],
      ['spelt with an escape', 'POST', () => '/applications', () => '{"name":"a","type":"private","permissions":["token:read"],"n\\u0061me":"b"}', 'name'],
      [
        'inside a rule',
        'PUT',
        () => `/applications/${env.app.id}`,
        () =>
          '{"name":"a","rules":[{"priority":1,"container":"/a/","transform":"mask","permissions":["token:read"]},{"priority":2,"priority":3,"container":"/b/","transform":"mask","permissions":["token:read"]}]}',
        'rules[1].priority',
      ],
      [
        'inside a condition',
        'POST',
        () => '/applications',
        () =>
          '{"name":"a","type":"expiring","rules":[{"priority":1,"transform":"mask","permissions":["token:read"],"conditions":[{"attribute":"id","operator":"equals","value":"x","value":"y"}]}]}',
        'rules[0].conditions[0].value',
      ],
      [
        'inside a configuration',
        'POST',
        () => '/proxies',
        () => `{"name":"p","destination_url":"${url()}","configuration":{"k":"1","k":"2"}}`,
        'configuration.k',
      ],
      [
        '__proto__ twice in a configuration',
        'PUT',
        () => `/proxies/${env.proxy.id}`,
        () => `{"name":"p","destination_url":"${url()}","configuration":{"__proto__":"1","__proto__":"2"}}`,
        'configuration.__proto__',
      ],
      ['in a merge patch', 'PATCH', () => `/proxies/${env.proxy.id}`, () => '{"request_transform":{"code":"a","code":null}}', 'request_transform.code'],
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
      const created = await send('POST', '/proxies', {
        body: `{"name":"protos","destination_url":"${env.upstream.origin}/","configuration":${configurationJson()}}`,
      });
      expect(created.status).toBe(201);
      expectConfiguration(created.body.configuration, configuration);
      const id = created.body.id as string;
      expectConfiguration((await send('GET', `/proxies/${id}`)).body.configuration, configuration);
      const listed = (await send('GET', `/proxies?id=${id}`)).body.data as { configuration: unknown }[];
      expectConfiguration(listed[0]!.configuration, configuration);

      const replaced = await send('PUT', `/proxies/${id}`, {
        body: `{"name":"protos","destination_url":"${env.upstream.origin}/","configuration":${configurationJson({ toString: 'replaced' })}}`,
      });
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
      const body = JSON.stringify({ name: 'echo', destination_url: `${env.upstream.origin}/`, require_auth: false, response_transform: { code } }).replace(
        /}$/,
        `,"configuration":${JSON.stringify({ __proto__: null, toString: 'data', constructor: 'data too' }).replace('{', '{"__proto__":"proto value",')}}`,
      );
      const created = await send('POST', '/proxies', { body });
      expect(created.status).toBe(201);
      const invoked = await env.t
        .http()
        .get('/proxy')
        .set('svc-proxy-key', created.body.key as string)
        .expect(200);
      expect(invoked.body.proto).toBe('proto value');
      expect(invoked.body.ctor).toBe('data too');
      expect(invoked.body.str).toBe('data');
      expect(new Map(invoked.body.entries)).toEqual(
        new Map([
          ['__proto__', 'proto value'],
          ['toString', 'data'],
          ['constructor', 'data too'],
        ]),
      );
    });

    it('outside a configuration, __proto__, constructor and prototype remain unknown fields (400, never dropped)', async () => {
      await expectRefused(400, () => send('POST', '/applications', { body: '{"name":"n","type":"private","permissions":["token:read"],"prototype":1}' }), [
        'prototype',
      ]);
      await expectRefused(
        400,
        () =>
          send('PUT', `/applications/${env.app.id}`, {
            body: '{"name":"n","permissions":["token:read"],"rules":[{"priority":1,"container":"/a/","transform":"mask","permissions":["token:read"],"prototype":{}}]}',
          }),
        ['rules[0].prototype'],
      );
      await expectRefused(400, () => send('POST', '/proxies', { body: `{"name":"n","destination_url":"${env.upstream.origin}/","__proto__":{"x":1}}` }), [
        '__proto__',
      ]);
      await expectRefused(400, () => send('PATCH', `/proxies/${env.proxy.id}`, { body: '{"application":{"constructor":{"prototype":{"x":1}}}}' }), [
        'application.constructor',
      ]);
      expect(({} as Record<string, unknown>).x).toBeUndefined();
    });
  });
});
