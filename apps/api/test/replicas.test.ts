import { startServiceProcess, ServiceProcess } from '../../../test/support/service-process';
import { startTestApp, TestApp } from '../../../test/support/test-app';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../../../test/support/test-env';

/**
 * Two API replicas over one PostgreSQL and Redis: a regenerate, delete or permission change made through one is
 * honoured by the other on the very next request.
 */
describe('two API replicas', () => {
  let t: TestApp;
  let a: ServiceProcess;
  let b: ServiceProcess;
  const env = { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, LOG_LEVEL: 'info' };

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
});
