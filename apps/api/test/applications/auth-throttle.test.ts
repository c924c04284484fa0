import { ApplicationRepository, ProxyRepository } from '@gatehouse/domain';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { Caller, expectProblem, newTenant } from '../support/application-fixtures';

/**
 * Guessing keys is throttled per client address (issue 9 part 4). supertest connects over loopback, which is a trusted
 * proxy here, so X-Forwarded-For names the client and one test can play several addresses.
 */
describe('failed-authentication throttle', () => {
  let t: TestApp;
  let admin: Caller;
  let upstream: Upstream;
  const LIMIT = 5;

  beforeAll(async () => {
    upstream = await startUpstream((_req, res) => res.end('ok'));
    t = await startTestApp({
      AUTH_THROTTLE_LIMIT: String(LIMIT),
      AUTH_THROTTLE_WINDOW_SECONDS: '600',
      TRUSTED_PROXIES: '127.0.0.0/8,::1/128',
      PROXY_ALLOW_HTTP: 'true',
      PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
    });
    admin = await newTenant(t);
  });
  afterAll(async () => {
    await t?.close();
    await upstream?.stop();
  });

  let next = 0;
  /** A fresh client address per test, so tests do not share counts. */
  const address = () => `198.18.${Math.floor(++next / 250)}.${next % 250}`;
  const guess = () => `key_${Math.random().toString(36).slice(2).padEnd(40, 'x')}`;
  const get = (path: string, from: string, key?: string) => {
    const req = t.http().get(path).set('x-forwarded-for', from);
    return key === undefined ? req : req.set('svc-api-key', key);
  };

  it(`answers ${LIMIT} guesses 401, then 429 with Retry-After, while real keys elsewhere keep working`, async () => {
    const attacker = address();
    for (let i = 0; i < LIMIT; i++) expectProblem(await get('/applications', attacker, guess()), 401);
    for (let i = 0; i < 20; i++) {
      const res = await get('/applications', attacker, guess());
      expectProblem(res, 429);
      // 600 s / 5 failures: one more attempt every 120 s.
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(100);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(120);
      expect(res.body.detail).toMatch(/failed authentications/);
    }
    expect((await get('/applications', address(), admin.key)).status).toBe(200);
  });

  it('does not touch the database for a blocked address', async () => {
    const attacker = address();
    for (let i = 0; i <= LIMIT; i++) await get('/applications', attacker, guess());
    const keyLookups = jest.spyOn(t.app.get(ApplicationRepository), 'findByKeyHash');
    const proxyLookups = jest.spyOn(t.app.get(ProxyRepository), 'findByKey');
    try {
      for (let i = 0; i < 50; i++) expectProblem(await get('/applications', attacker, guess()), 429);
      for (let i = 0; i < 10; i++) expectProblem(await get(`/proxy?svc-proxy-key=${'A'.repeat(32)}`, attacker), 429);
      expect(keyLookups).not.toHaveBeenCalled();
      expect(proxyLookups).not.toHaveBeenCalled();
    } finally {
      keyLookups.mockRestore();
      proxyLookups.mockRestore();
    }
  });

  it('never counts successful calls or a missing key', async () => {
    const client = address();
    for (let i = 0; i < LIMIT * 4; i++) expect((await get('/applications', client, admin.key)).status).toBe(200);
    for (let i = 0; i < LIMIT * 2; i++) expectProblem(await get('/applications', client), 401);
    expectProblem(await get('/applications', client, guess()), 401);
  });

  it('counts guessed proxy keys and API keys of one address together', async () => {
    const attacker = address();
    const res = await t
      .http()
      .post('/proxies')
      .set('svc-api-key', admin.key)
      .send({ name: 'p', destination_url: `${upstream.origin}/` });
    expect(res.status).toBe(201);
    const proxyKey = res.body.key as string;
    for (let i = 0; i < 2; i++) expectProblem(await get(`/proxy?svc-proxy-key=${'Q'.repeat(30)}${i}x`, attacker), 404);
    // A real proxy with a wrong API key is a failed authentication too.
    for (let i = 0; i < 2; i++) expectProblem(await get('/proxy', attacker, guess()).set('svc-proxy-key', proxyKey), 401);
    expectProblem(await get('/applications', attacker, guess()), 401);
    expectProblem(await get('/proxy', attacker).set('svc-proxy-key', 'R'.repeat(32)), 429);
    const blocked = await get('/proxy', attacker, admin.key).set('svc-proxy-key', proxyKey);
    expectProblem(blocked, 429);
    expect(blocked.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('takes the client from X-Forwarded-For only through a trusted proxy, and IPv6 by its /64', async () => {
    const v6 = '2001:db8:1:2:';
    for (let i = 0; i < LIMIT; i++) expectProblem(await get('/applications', `${v6}:${i + 1}`, guess()), 401);
    // Another address of the same /64 is the same client.
    expectProblem(await get('/applications', `${v6}aaaa:bbbb:cccc:dddd`, guess()), 429);
    expectProblem(await get('/applications', '2001:db8:1:3::1', guess()), 401);
  });
});

describe('failed-authentication throttle without trusted proxies', () => {
  let t: TestApp;
  beforeAll(async () => (t = await startTestApp({ AUTH_THROTTLE_LIMIT: '3' })));
  afterAll(() => t?.close());

  it('counts the socket address whatever X-Forwarded-For claims', async () => {
    for (let i = 0; i < 3; i++) {
      expectProblem(
        await t
          .http()
          .get('/applications')
          .set('x-forwarded-for', `203.0.113.${i}`)
          .set('svc-api-key', `key_${'Z'.repeat(39)}${i}`),
        401,
      );
    }
    expectProblem(
      await t
        .http()
        .get('/applications')
        .set('x-forwarded-for', '203.0.113.99')
        .set('svc-api-key', `key_${'Z'.repeat(40)}`),
      429,
    );
  });
});

describe('failed-authentication throttle turned off', () => {
  let t: TestApp;
  beforeAll(async () => (t = await startTestApp({ AUTH_THROTTLE_LIMIT: '0' })));
  afterAll(() => t?.close());

  it('answers every guess 401', async () => {
    for (let i = 0; i < 30; i++)
      expectProblem(
        await t
          .http()
          .get('/applications')
          .set('svc-api-key', `key_${'Y'.repeat(40)}`),
        401,
      );
  });
});
