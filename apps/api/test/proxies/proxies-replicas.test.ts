import { ServiceProcess, startServiceProcess } from '@gatehouse/test-support/service-process';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '@gatehouse/test-support/test-env';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';

jest.setTimeout(60_000);

/**
 * Two API replicas (the built service) over one PostgreSQL and Redis: a proxy changed or deleted through one
 * is invoked as changed, or not at all, through the other on the very next request, however warm its cache.
 */
describe('proxies across two API replicas', () => {
  let t: TestApp;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let upstream: Upstream;
  const seen: string[] = [];

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      seen.push(req.url!);
      res.end('ok');
    });
    const env = {
      DATABASE_URL: TEST_DATABASE_URL,
      REDIS_URL: TEST_REDIS_URL,
      PROXY_ALLOW_HTTP: 'true',
      PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
      REACTOR_POOL_SIZE: '1',
    };
    t = await startTestApp();
    [a, b] = await Promise.all([startServiceProcess(env, ['--api-only']), startServiceProcess(env, ['--api-only'])]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await t?.close();
    await upstream?.stop();
  });

  const manage = (method: string, path: string, key: string, body?: unknown) =>
    fetch(`${a.baseUrl}${path}`, {
      method,
      headers: {
        'svc-api-key': key,
        ...(body ? { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });

  async function invokeOnB(proxyKey: string, headers: Record<string, string> = {}): Promise<{ status: number; path?: string }> {
    const before = seen.length;
    const res = await fetch(`${b.baseUrl}/proxy/x`, { headers: { 'svc-proxy-key': proxyKey, ...headers } });
    await res.arrayBuffer();
    return { status: res.status, path: seen.length > before ? seen[seen.length - 1] : undefined };
  }

  it('an update made through one replica is what the other invokes next, every time', async () => {
    const { key } = await t.tenant();
    const created = await manage('POST', '/proxies', key, { name: 'r', destination_url: `${upstream.origin}/v0`, require_auth: false });
    expect(created.status).toBe(201);
    const proxy = (await created.json()) as { id: string; key: string };
    for (let round = 1; round <= 5; round++) {
      // Warm B's cache with the current destination, then move it through A.
      expect(await invokeOnB(proxy.key)).toEqual({ status: 200, path: `/v${round - 1}/x` });
      expect(await invokeOnB(proxy.key)).toEqual({ status: 200, path: `/v${round - 1}/x` });
      const moved = await manage('PATCH', `/proxies/${proxy.id}`, key, { destination_url: `${upstream.origin}/v${round}` });
      expect(moved.status).toBe(200);
      expect(await invokeOnB(proxy.key)).toEqual({ status: 200, path: `/v${round}/x` });
    }
    expect((await manage('PATCH', `/proxies/${proxy.id}`, key, { require_auth: true })).status).toBe(200);
    expect((await invokeOnB(proxy.key)).status).toBe(401);
    expect((await invokeOnB(proxy.key, { 'svc-api-key': key })).status).toBe(200);
  });

  it('a proxy deleted through one replica is gone on the other at once', async () => {
    const { key } = await t.tenant();
    const created = await manage('POST', '/proxies', key, { name: 'r', destination_url: `${upstream.origin}/`, require_auth: false });
    const proxy = (await created.json()) as { id: string; key: string };
    expect((await invokeOnB(proxy.key)).status).toBe(200);
    expect((await invokeOnB(proxy.key)).status).toBe(200);
    expect((await manage('DELETE', `/proxies/${proxy.id}`, key)).status).toBe(204);
    expect(await invokeOnB(proxy.key)).toEqual({ status: 404, path: undefined });
  });
});
