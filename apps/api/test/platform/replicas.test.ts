import { randomUUID } from 'node:crypto';
import { startServiceProcess, ServiceProcess } from '@gatehouse/test-support/service-process';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '@gatehouse/test-support/test-env';

/**
 * Two API replicas over one PostgreSQL and Redis: a regenerate, delete or permission change made through one is
 * honoured by the other on the very next request.
 */
describe('two API replicas', () => {
  let t: TestApp;
  let a: ServiceProcess;
  let b: ServiceProcess;
  const THROTTLE_LIMIT = 20;
  const env = {
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: TEST_REDIS_URL,
    LOG_LEVEL: 'info',
    // Counters of this run only, and X-Forwarded-For believed from loopback, so a test can play a client address.
    QUEUE_PREFIX: `replicas-${randomUUID()}`,
    TRUSTED_PROXIES: '127.0.0.0/8',
    AUTH_THROTTLE_LIMIT: String(THROTTLE_LIMIT),
    // One more attempt per 180 s: a slow run cannot earn one back between the failures.
    AUTH_THROTTLE_WINDOW_SECONDS: '3600',
  };

  beforeAll(async () => {
    t = await startTestApp();
    [a, b] = await Promise.all([startServiceProcess(env, ['--api-only']), startServiceProcess(env, ['--api-only'])]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await t?.close();
  });

  const call = (replica: ServiceProcess, method: string, path: string, key: string, body?: unknown) =>
    fetch(`${replica.baseUrl}${path}`, {
      method,
      headers: { 'svc-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });

  async function createManagementApp(admin: string, permissions: string[]) {
    const res = await call(a, 'POST', '/applications', admin, { name: 'replica-test', type: 'management', permissions });
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; key: string };
  }

  it('refuses a regenerated key on the other replica at once, repeatedly', async () => {
    const { key: admin } = await t.tenant();
    let { id, key } = await createManagementApp(admin, ['application:read']);
    for (let round = 0; round < 5; round++) {
      expect((await call(b, 'GET', '/applications/key', key)).status).toBe(200);
      const regenerated = await call(a, 'POST', `/applications/${id}/regenerate`, admin);
      expect(regenerated.status).toBe(200);
      const next = (await regenerated.json()) as { key: string };
      expect((await call(b, 'GET', '/applications/key', key)).status).toBe(401);
      expect((await call(b, 'GET', '/applications/key', next.key)).status).toBe(200);
      key = next.key;
      id = id as string;
    }
  });

  it('refuses a deleted application on the other replica at once', async () => {
    const { key: admin } = await t.tenant();
    const app = await createManagementApp(admin, ['application:read']);
    expect((await call(b, 'GET', '/applications/key', app.key)).status).toBe(200);
    expect((await call(a, 'DELETE', `/applications/${app.id}`, admin)).status).toBe(204);
    expect((await call(b, 'GET', '/applications/key', app.key)).status).toBe(401);
  });

  it('applies a permission change on the other replica at once', async () => {
    const { key: admin } = await t.tenant();
    const app = await createManagementApp(admin, ['application:read', 'log:read']);
    expect((await call(b, 'GET', '/applications', app.key)).status).toBe(200);
    const put = await call(a, 'PUT', `/applications/${app.id}`, admin, { name: 'replica-test', permissions: ['log:read'] });
    expect(put.status).toBe(200);
    expect((await call(b, 'GET', '/applications', app.key)).status).toBe(403);
  });

  it('counts failed authentications of one address across both replicas', async () => {
    const { key: admin } = await t.tenant();
    const from = (replica: ServiceProcess, key: string) =>
      fetch(`${replica.baseUrl}/applications`, { headers: { 'svc-api-key': key, 'x-forwarded-for': '192.0.2.77' } });
    const guess = (i: number) => `key_${String(i).padStart(40, 'G')}`;
    for (let i = 0; i < THROTTLE_LIMIT; i++) expect((await from(i % 2 ? a : b, guess(i))).status).toBe(401);
    for (const replica of [a, b, a, b]) {
      const res = await from(replica, guess(99));
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    const other = await fetch(`${b.baseUrl}/applications`, { headers: { 'svc-api-key': admin, 'x-forwarded-for': '192.0.2.78' } });
    expect(other.status).toBe(200);
  });

  /** The key of a new application (in a new tenant) that may read itself, under `rate_limit`. */
  async function limitedKey(rateLimit: { limit: number; window_seconds: number }): Promise<string> {
    const { key: admin } = await t.tenant();
    const created = await call(a, 'POST', '/applications', admin, {
      name: 'limited',
      type: 'management',
      permissions: ['application:read'],
      rate_limit: rateLimit,
    });
    expect(created.status).toBe(201);
    return ((await created.json()) as { key: string }).key;
  }

  it("shares an application's rate limit between the replicas", async () => {
    const key = await limitedKey({ limit: 4, window_seconds: 600 });
    const remaining: string[] = [];
    for (const replica of [a, b, a, b]) {
      const res = await call(replica, 'GET', '/applications/key', key);
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toBe('"application";q=4;w=600');
      remaining.push(res.headers.get('ratelimit')!.split(';')[1]!);
    }
    expect(remaining).toEqual(['r=3', 'r=2', 'r=1', 'r=0']);
    for (const replica of [a, b]) {
      const res = await call(replica, 'GET', '/applications/key', key);
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(100);
    }
  });

  it("never lets the replicas admit more than a busy application's limit together while they lease it", async () => {
    // 400 an hour: large enough for the replicas to count it from leases (of up to 4 cells), and one more only every
    // 9 s, so the run earns none back.
    const key = await limitedKey({ limit: 400, window_seconds: 3600 });
    const statuses: number[] = [];
    const loop = async (replica: ServiceProcess) => {
      for (let i = 0; i < 50; i++) {
        const res = await call(replica, 'GET', '/applications/key', key);
        await res.arrayBuffer();
        expect(res.headers.get('ratelimit-policy')).toBe('"application";q=400;w=3600');
        expect(res.headers.get('ratelimit')).toMatch(/^"application";r=\d+;t=\d+$/);
        statuses.push(res.status);
      }
    };
    await Promise.all([a, b, a, b, a, b, a, b, a, b, a, b].map(loop));
    const admitted = statuses.filter((status) => status === 200).length;
    expect(admitted).toBeLessThanOrEqual(400);
    // Leases may waste a little: cells a lease still held when it ended.
    expect(admitted).toBeGreaterThanOrEqual(380);
    expect(statuses.filter((status) => status === 429)).toHaveLength(600 - admitted);
  });

  it('honours a rotation overlap on the other replica, and ends it there at once', async () => {
    const { key: admin } = await t.tenant();
    const app = await createManagementApp(admin, ['application:read']);
    const overlap = await call(a, 'POST', `/applications/${app.id}/regenerate?previous_key_expires_in_seconds=600`, admin);
    expect(overlap.status).toBe(200);
    const second = (await overlap.json()) as { key: string; previous_key_expires_at: string };
    expect(Date.parse(second.previous_key_expires_at)).toBeGreaterThan(Date.now() + 590_000);
    expect((await call(b, 'GET', '/applications/key', app.key)).status).toBe(200);
    expect((await call(b, 'GET', '/applications/key', second.key)).status).toBe(200);
    const again = await call(a, 'POST', `/applications/${app.id}/regenerate`, admin, { previous_key_expires_in_seconds: 0 });
    expect(again.status).toBe(200);
    const third = (await again.json()) as { key: string };
    expect((await call(b, 'GET', '/applications/key', app.key)).status).toBe(401);
    expect((await call(b, 'GET', '/applications/key', second.key)).status).toBe(401);
    expect((await call(b, 'GET', '/applications/key', third.key)).status).toBe(200);

    const last = await call(a, 'POST', `/applications/${app.id}/regenerate?previous_key_expires_in_seconds=600`, admin);
    const fourth = (await last.json()) as { key: string };
    expect((await call(b, 'GET', '/applications/key', third.key)).status).toBe(200);
    expect((await call(a, 'DELETE', `/applications/${app.id}`, admin)).status).toBe(204);
    expect((await call(b, 'GET', '/applications/key', third.key)).status).toBe(401);
    expect((await call(b, 'GET', '/applications/key', fourth.key)).status).toBe(401);
  });
});
