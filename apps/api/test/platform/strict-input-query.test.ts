import { startUpstream } from '@gatehouse/test-support/upstream';
import { ANY_UUID, as, createApplication } from '../support/application-fixtures';
import { useStrictInput } from './strict-input.fixture';

/** Strict input (issue 9 part 3): see strict-input.test.ts. */

describe('strict input', () => {
  const env = useStrictInput();
  const { send, expectRefused, validApplication, validProxy } = env;

  describe('GET, HEAD and DELETE take no body: one sent anyway is a 400, never ignored', () => {
    const BODILESS: [string, string, () => string][] = [
      ['GET', '/applications', () => '/applications'],
      ['GET', '/applications/key', () => '/applications/key'],
      ['GET', '/applications/{id}', () => `/applications/${env.app.id}`],
      ['GET', '/proxies', () => '/proxies'],
      ['GET', '/proxies/{id}', () => `/proxies/${env.proxy.id}`],
      ['GET', '/logs', () => '/logs'],
      ['GET', '/logs/entity-types', () => '/logs/entity-types'],
      ['GET', '/permissions', () => '/permissions?application_type=private'],
      ['GET', '/health/live', () => '/health/live'],
      ['DELETE', '/applications/{id}', () => `/applications/${env.app.id}`],
      ['DELETE', '/proxies/{id}', () => `/proxies/${env.proxy.id}`],
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
      const doomed = await createApplication(env.t, env.admin.key, { name: 'doomed', type: 'private', permissions: ['token:read'] });
      expect((await send('DELETE', `/applications/${doomed.id}`, { headers: { 'transfer-encoding': 'chunked' } })).status).toBe(204);
    });

    it('a body over the size limit is the same 400, declared or chunked, and the connection stays usable', async () => {
      const big = `{"a":"${'x'.repeat(1024 * 1024)}"}`;
      await expectRefused(400, () => send('GET', '/applications', { body: big }));
      await expectRefused(400, () => send('DELETE', `/applications/${env.app.id}`, { body: big, headers: { 'transfer-encoding': 'chunked' } }));
      expect((await send('GET', '/applications')).status).toBe(200);
    });

    it('/proxy passes a GET body on to the destination: the data plane is not this API', async () => {
      const open = await as(env.t, env.admin.key).post('/proxies', { name: 'open', destination_url: `${env.upstream.origin}/`, require_auth: false });
      const res = await env.t.http().get('/proxy').set('svc-proxy-key', open.body.key).set('content-type', 'application/json').send('{"a":1}');
      expect([res.status, res.text]).toEqual([200, '{"upstream":true}']);
    });
  });

  describe('query strings: every unknown parameter is a 400, integers are plain decimal digits', () => {
    // Every management route, with and without a query DTO of its own.
    const ROUTES: [string, () => string][] = [
      ['GET', () => '/applications'],
      ['GET', () => '/applications/key'],
      ['GET', () => `/applications/${env.app.id}`],
      ['GET', () => '/proxies'],
      ['GET', () => `/proxies/${env.proxy.id}`],
      ['GET', () => '/logs'],
      ['GET', () => '/logs/entity-types'],
      ['GET', () => '/permissions'],
      ['DELETE', () => `/applications/${env.app.id}`],
      ['DELETE', () => `/proxies/${env.proxy.id}`],
      ['POST', () => `/applications/${env.app.id}/regenerate`],
      ['POST', () => '/applications'],
      ['PUT', () => `/proxies/${env.proxy.id}`],
      ['PATCH', () => `/proxies/${env.proxy.id}`],
    ];
    const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', 'foo', 'PAGE', 'page[]', 'id[0]', '__proto__[polluted]'];
    const cases = ROUTES.flatMap(([method, path]) => NAMES.map((name) => [method, path, name] as const));

    it.each(cases)('%s %p with ?%s=1 is a 400 naming it, and changes nothing', async (method, path, name) => {
      const body =
        method === 'POST' && path() === '/applications' ? validApplication : method === 'PUT' ? validProxy() : method === 'PATCH' ? '{"name":"n"}' : undefined;
      const reply = await expectRefused(400, () => send(method, `${path()}?${encodeURIComponent(name)}=1`, { body }), [name]);
      expect(reply.body.errors![name]).toEqual(['is not allowed']);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    const NOT_INTEGERS = [
      '0x10',
      '1e1',
      '+1',
      '%201',
      '1%20',
      '1.0',
      '1.5',
      '-1',
      '0b1',
      '0o7',
      '1_0',
      'Infinity',
      'NaN',
      '',
      '%EF%BC%91',
      '9999999999999999',
      'true',
      '1,2',
    ];
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
      expect((await send('GET', `/proxies?id=${env.proxy.id}&id=${ANY_UUID}`)).status).toBe(200);
    });

    it('the /proxy data plane forwards its query string, whatever the names', async () => {
      const seen: string[] = [];
      const echo = await startUpstream((req, res) => {
        seen.push(req.url!);
        res.end('ok');
      });
      try {
        const created = await as(env.t, env.admin.key)
          .post('/proxies', { name: 'q', destination_url: `${echo.origin}/`, require_auth: false })
          .expect(201);
        await env.t.http().get(`/proxy/x?__proto__=1&constructor=2&page=0x10&svc-proxy-key=${created.body.key}`).expect(200);
        expect(seen).toEqual(['/x?__proto__=1&constructor=2&page=0x10']);
      } finally {
        await echo.stop();
      }
    });
  });
});
