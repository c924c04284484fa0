import type { Response } from 'supertest';
import { SetTenantRateLimit } from '@gatehouse/domain';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { as, auditEvents, Caller, createApplication, expectProblem, newTenant, selfRelimitAttack, VALID } from '../support/application-fixtures';

/** Rate limits of applications and proxies (issue 14 part 1), on one process with the in-memory counter. */
describe('rate limits', () => {
  let t: TestApp;
  let admin: Caller;
  let upstream: Upstream;

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      // A destination with limits of its own: its fields are listed after Gatehouse's.
      if (req.url?.includes('limited')) res.setHeader('ratelimit', '"upstream";r=7;t=1');
      res.end('ok');
    });
    t = await startTestApp({ PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8' });
    admin = await newTenant(t);
  });
  afterAll(async () => {
    await t?.close();
    await upstream?.stop();
  });

  const reader = (rateLimit?: unknown) =>
    createApplication(t, admin.key, {
      name: 'limited',
      type: 'management',
      permissions: ['application:read', 'proxy:invoke'],
      ...(rateLimit === undefined ? {} : { rate_limit: rateLimit }),
    });

  function expectState(res: Response, policy: string, state: RegExp): void {
    expect(res.headers['ratelimit-policy']).toBe(policy);
    expect(res.headers['ratelimit']).toMatch(state);
  }

  describe('of an application', () => {
    it('admits `limit` requests with the IETF headers, then answers 429 ProblemDetails with Retry-After', async () => {
      const app = await reader({ limit: 3, window_seconds: 600 });
      expect(app.body.rate_limit).toEqual({ limit: 3, window_seconds: 600 });
      for (const remaining of [2, 1, 0]) {
        const res = await as(t, app.key).get('/applications/key').expect(200);
        expectState(res, '"application";q=3;w=600', new RegExp(`^"application";r=${remaining};t=\\d+$`));
        expect(res.body.rate_limit).toEqual({ limit: 3, window_seconds: 600 });
      }
      const refused = await as(t, app.key).get('/applications/key');
      expectProblem(refused, 429);
      expect(refused.body.detail).toMatch(/application's \(3 requests per 600 s\)/);
      // One request every 200 s.
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(190);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(200);
      expectState(refused, '"application";q=3;w=600', /^"application";r=0;t=\d+$/);
      // Another key of the same tenant is counted apart.
      await as(t, admin.key).get('/applications').expect(200);
    });

    it('sends no RateLimit headers when no limit applies', async () => {
      const res = await as(t, (await reader()).key)
        .get('/applications/key')
        .expect(200);
      expect(res.headers['ratelimit']).toBeUndefined();
      expect(res.headers['ratelimit-policy']).toBeUndefined();
      expect(res.body).not.toHaveProperty('rate_limit');
    });

    it('counts a refused permission too: every authenticated request counts', async () => {
      const app = await reader({ limit: 1, window_seconds: 600 });
      expectProblem(await as(t, app.key).get('/logs'), 403);
      expectProblem(await as(t, app.key).get('/applications/key'), 429);
    });

    it('is changed by PUT, cleared by a PUT without it, and audited', async () => {
      const app = await reader({ limit: 5, window_seconds: 60 });
      const body = { name: 'limited', permissions: ['application:read'] };
      const put = await as(t, admin.key)
        .put(`/applications/${app.id}`, { ...body, rate_limit: { limit: 1, window_seconds: 3600 } })
        .expect(200);
      expect(put.body.rate_limit).toEqual({ limit: 1, window_seconds: 3600 });
      await as(t, app.key).get('/applications/key').expect(200);
      expectProblem(await as(t, app.key).get('/applications/key'), 429);
      const cleared = await as(t, admin.key).put(`/applications/${app.id}`, body).expect(200);
      expect(cleared.body).not.toHaveProperty('rate_limit');
      const res = await as(t, app.key).get('/applications/key').expect(200);
      expect(res.headers['ratelimit']).toBeUndefined();
      await as(t, admin.key).put(`/applications/${app.id}`, body).expect(200);
      const messages = (await auditEvents(t, { entityId: app.id })).map((e) => e.message);
      expect(messages).toEqual([
        "Application 'limited' (management) created with a rate limit of 5 requests per 60 s",
        "Application 'limited' updated; rate limit set to 1 request per 3600 s",
        "Application 'limited' updated; rate limit removed",
        "Application 'limited' updated",
      ]);
    });

    it('applies a limit changed while the key is in the cache from the next request, carrying its count over', async () => {
      const app = await reader({ limit: 5, window_seconds: 60 });
      // The key is now in the cache with its limit: the guard counts alongside the key's check with that one.
      expectState(await as(t, app.key).get('/applications/key').expect(200), '"application";q=5;w=60', /^"application";r=4;t=\d+$/);
      const body = { name: 'limited', permissions: ['application:read'] };
      await as(t, admin.key)
        .put(`/applications/${app.id}`, { ...body, rate_limit: { limit: 10, window_seconds: 60 } })
        .expect(200);
      // One of 5 used is one of 10 used; the guard's count with the old limit, alongside the check, counts too.
      expectState(await as(t, app.key).get('/applications/key').expect(200), '"application";q=10;w=60', /^"application";r=[67];t=\d+$/);
      await as(t, admin.key)
        .put(`/applications/${app.id}`, { ...body, rate_limit: { limit: 1, window_seconds: 3600 } })
        .expect(200);
      // Having used some of its limit, it has used all of 1 per hour: no fresh burst under a new policy.
      expectProblem(await as(t, app.key).get('/applications/key'), 429);
    });

    it('gives no fresh burst to a key that changes its own limit (5/600 to 5/601, 5/602...)', async () => {
      // At most its burst of 5 (each policy a new bucket served 60); fewer when a count made with the limit the key
      // cache held a moment before a change lands in the same bucket as the verified one (it counts, never uncounts).
      const served = await selfRelimitAttack(t, admin);
      expect(served).toBeGreaterThan(0);
      expect(served).toBeLessThanOrEqual(5);
    });

    it('refuses a key regenerated away while it was in the cache, before any rate limit', async () => {
      const app = await reader({ limit: 1, window_seconds: 3600 });
      await as(t, app.key).get('/applications/key').expect(200);
      const { body } = await as(t, admin.key).post(`/applications/${app.id}/regenerate`).expect(200);
      // Exhausted, but the old key is unknown now: 401, not 429.
      expectProblem(await as(t, app.key).get('/applications/key'), 401);
      expectProblem(await as(t, body.key).get('/applications/key'), 429);
    });

    it.each([
      ['a zero limit', { limit: 0, window_seconds: 60 }, ['rate_limit.limit']],
      ['a negative limit', { limit: -1, window_seconds: 60 }, ['rate_limit.limit']],
      ['a fractional limit', { limit: 1.5, window_seconds: 60 }, ['rate_limit.limit']],
      ['a limit as a string', { limit: '10', window_seconds: 60 }, ['rate_limit.limit']],
      ['a limit beyond 1,000,000', { limit: 1_000_001, window_seconds: 60 }, ['rate_limit.limit']],
      ['a zero window', { limit: 10, window_seconds: 0 }, ['rate_limit.window_seconds']],
      ['a window beyond a day', { limit: 10, window_seconds: 86_401 }, ['rate_limit.window_seconds']],
      ['no window', { limit: 10 }, ['rate_limit.window_seconds']],
      ['an array', [10, 60], ['rate_limit']],
      ['a number', 10, ['rate_limit']],
    ])('refuses %s with a 400 naming the field, storing nothing', async (_, rateLimit, fields) => {
      const before = (await auditEvents(t, { tenantId: admin.tenantId })).length;
      expectProblem(await as(t, admin.key).post('/applications', { ...VALID.private, rate_limit: rateLimit }), 400, fields);
      const app = await reader({ limit: 9, window_seconds: 9 });
      expectProblem(
        await as(t, admin.key).put(`/applications/${app.id}`, { name: 'x', permissions: ['application:read'], rate_limit: rateLimit }),
        400,
        fields,
      );
      expect((await as(t, admin.key).get(`/applications/${app.id}`).expect(200)).body.rate_limit).toEqual({ limit: 9, window_seconds: 9 });
      expect((await auditEvents(t, { tenantId: admin.tenantId })).length).toBe(before + 1);
    });
  });

  describe("the tenant's default (set by the operator)", () => {
    it('applies to applications without a limit of their own, at once, and is audited', async () => {
      const tenant = await newTenant(t);
      const own = await createApplication(t, tenant.key, {
        name: 'own',
        type: 'management',
        permissions: ['application:read'],
        rate_limit: { limit: 50, window_seconds: 60 },
      });
      const plain = await createApplication(t, tenant.key, { name: 'plain', type: 'management', permissions: ['application:read'] });
      await as(t, plain.key).get('/applications/key').expect(200);
      await t.app.get(SetTenantRateLimit).execute(tenant.tenantId, { limit: 1, windowSeconds: 3600 });
      const first = await as(t, plain.key).get('/applications/key').expect(200);
      expectState(first, '"application";q=1;w=3600', /^"application";r=0;/);
      expect(first.body).not.toHaveProperty('rate_limit');
      expectProblem(await as(t, plain.key).get('/applications/key'), 429);
      // An application's own limit wins over the default.
      expectState(await as(t, own.key).get('/applications/key').expect(200), '"application";q=50;w=60', /r=49/);
      await t.app.get(SetTenantRateLimit).execute(tenant.tenantId, null);
      expect((await as(t, plain.key).get('/applications/key').expect(200)).headers['ratelimit']).toBeUndefined();
      const messages = (await auditEvents(t, { entityId: tenant.tenantId })).map((e) => [e.entity_type, e.operation, e.actor_type, e.message]);
      expect(messages.slice(-2)).toEqual([
        ['tenant', 'update', 'system', expect.stringMatching(/default rate limit set to 1 request per 3600 s \(was none\)$/)],
        ['tenant', 'update', 'system', expect.stringMatching(/default rate limit removed \(was 1 request per 3600 s\)$/)],
      ]);
    });
  });

  describe('of a proxy', () => {
    async function proxy(body: Record<string, unknown>): Promise<{ id: string; key: string; rate_limit?: unknown }> {
      const res = await as(t, admin.key).post('/proxies', { name: 'limited', destination_url: `${upstream.origin}/`, ...body });
      if (res.status !== 201) throw new Error(`proxy create failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    }
    const invoke = (key: string, apiKey?: string, path = '/proxy') => {
      const req = t.http().get(path).set('svc-proxy-key', key);
      return apiKey ? req.set('svc-api-key', apiKey) : req;
    };

    it('counts invocations across all callers, with the headers, and 429 past the limit', async () => {
      const p = await proxy({ require_auth: false, rate_limit: { limit: 2, window_seconds: 600 } });
      expect(p.rate_limit).toEqual({ limit: 2, window_seconds: 600 });
      expectState(await invoke(p.key).expect(200), '"proxy";q=2;w=600', /^"proxy";r=1;t=\d+$/);
      expectState(await invoke(p.key, (await reader()).key).expect(200), '"proxy";q=2;w=600', /^"proxy";r=0;/);
      const refused = await invoke(p.key);
      expectProblem(refused, 429);
      expect(refused.headers['retry-after']).toMatch(/^\d+$/);
      expect(refused.body.detail).toMatch(/proxy's \(2 requests per 600 s\)/);
    });

    it("counts the caller's application too, refusing without using up the other limit", async () => {
      const p = await proxy({ rate_limit: { limit: 10, window_seconds: 600 } });
      const caller = await reader({ limit: 1, window_seconds: 600 });
      const ok = await invoke(p.key, caller.key).expect(200);
      expect(ok.headers['ratelimit-policy']).toBe('"proxy";q=10;w=600, "application";q=1;w=600');
      expect(ok.headers['ratelimit']).toMatch(/^"proxy";r=9;t=\d+, "application";r=0;t=\d+$/);
      const refused = await invoke(p.key, caller.key);
      expectProblem(refused, 429);
      expect(refused.body.detail).toMatch(/application's \(1 request per 600 s\)/);
      // The refusal took nothing from the proxy's limit.
      expect((await invoke(p.key, (await reader()).key).expect(200)).headers['ratelimit']).toMatch(/^"proxy";r=8;/);
    });

    it("lists a destination's own RateLimit fields after Gatehouse's", async () => {
      const p = await proxy({ require_auth: false, rate_limit: { limit: 5, window_seconds: 60 } });
      const res = await invoke(p.key, undefined, '/proxy/limited').expect(200);
      expect(res.headers['ratelimit']).toMatch(/^"proxy";r=4;t=\d+, "upstream";r=7;t=1$/);
    });

    it('is set, merged and cleared by PUT and PATCH, validated, and audited', async () => {
      const p = await proxy({ require_auth: false });
      expect(p).not.toHaveProperty('rate_limit');
      const patch = (body: unknown) =>
        t.http().patch(`/proxies/${p.id}`).set('svc-api-key', admin.key).set('content-type', 'application/merge-patch+json').send(JSON.stringify(body));
      expect((await patch({ rate_limit: { limit: 5, window_seconds: 60 } }).expect(200)).body.rate_limit).toEqual({ limit: 5, window_seconds: 60 });
      expect((await patch({ rate_limit: { limit: 7 } }).expect(200)).body.rate_limit).toEqual({ limit: 7, window_seconds: 60 });
      expectProblem(await patch({ rate_limit: { window_seconds: null } }), 400, ['rate_limit.window_seconds']);
      expectProblem(await patch({ rate_limit: { limit: 0 } }), 400, ['rate_limit.limit']);
      expectProblem(await patch({ rate_limit: [] }), 400, ['rate_limit']);
      expect((await patch({ rate_limit: null }).expect(200)).body).not.toHaveProperty('rate_limit');
      await patch({ name: 'renamed' }).expect(200);
      const put = await as(t, admin.key)
        .put(`/proxies/${p.id}`, { name: 'renamed', destination_url: `${upstream.origin}/`, rate_limit: { limit: 3, window_seconds: 1 } })
        .expect(200);
      expect(put.body.rate_limit).toEqual({ limit: 3, window_seconds: 1 });
      expectProblem(
        await as(t, admin.key).put(`/proxies/${p.id}`, {
          name: 'renamed',
          destination_url: `${upstream.origin}/`,
          rate_limit: { limit: 3, window_seconds: 86_401 },
        }),
        400,
        ['rate_limit.window_seconds'],
      );
      expect((await as(t, admin.key).get(`/proxies/${p.id}`).expect(200)).body.rate_limit).toEqual({ limit: 3, window_seconds: 1 });
      const messages = (await auditEvents(t, { entityId: p.id })).map((e) => e.message);
      expect(messages).toEqual([
        "Proxy 'limited' created",
        "Proxy 'limited' updated; rate limit set to 5 requests per 60 s",
        "Proxy 'limited' updated; rate limit set to 7 requests per 60 s",
        "Proxy 'limited' updated; rate limit removed",
        "Proxy 'renamed' updated",
        "Proxy 'renamed' updated; rate limit set to 3 requests per 1 s",
      ]);
    });
  });
});
