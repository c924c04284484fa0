import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { Caller } from '../support/application-fixtures';

// Apps with their sandbox pools start per file, and some tests run transforms to the reactor's limits.
jest.setTimeout(30_000);

export interface ProxiesApi {
  t: TestApp;
  /** The operator defaults: https only, no private ranges. */
  strict: TestApp;
  create(caller: Caller, body: Record<string, unknown>, app?: TestApp): ReturnType<ReturnType<TestApp['http']>['post']>;
  createOk(caller: Caller, body?: Record<string, unknown>): Promise<Record<string, any>>;
  patch(caller: Caller, id: string, body: unknown): ReturnType<ReturnType<TestApp['http']>['patch']>;
}

/** Management of proxies (proxies*.test.ts): two apps per file, started in beforeAll, and the requests the tests share. */
export function useProxiesApi(): ProxiesApi {
  const env = {} as ProxiesApi;
  beforeAll(async () => {
    [env.t, env.strict] = await Promise.all([
      startTestApp({ PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8', REACTOR_POOL_SIZE: '1' }),
      startTestApp({ REACTOR_POOL_SIZE: '1' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([env.t?.close(), env.strict?.close()]);
  });
  env.create = (caller, body, app = env.t) => app.http().post('/proxies').set('svc-api-key', caller.key).send(body);
  env.createOk = async (caller, body = {}) => {
    const res = await env.create(caller, { name: 'payments', destination_url: 'https://api.example.com/v1', ...body });
    expect(res.status).toBe(201);
    return res.body;
  };
  env.patch = (caller, id, body) =>
    env.t.http().patch(`/proxies/${id}`).set('svc-api-key', caller.key).set('content-type', 'application/merge-patch+json').send(JSON.stringify(body));
  return env;
}
