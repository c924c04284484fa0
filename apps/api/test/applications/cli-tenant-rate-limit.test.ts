import { CLI_MAIN, runToCompletion } from '@gatehouse/test-support/service-process';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { TEST_DATABASE_URL } from '@gatehouse/test-support/test-env';
import { as, auditEvents, createApplication, expectProblem } from '../support/application-fixtures';

/** `gatehouse tenant rate-limit`, the operator's tenant-wide default, run as the built CLI. */
describe('gatehouse tenant rate-limit', () => {
  let t: TestApp;
  beforeAll(async () => (t = await startTestApp()));
  afterAll(() => t?.close());

  const cli = (...args: string[]) => runToCompletion(CLI_MAIN, ['tenant', 'rate-limit', ...args], { DATABASE_URL: TEST_DATABASE_URL, LOG_LEVEL: 'silent' });

  it('sets the default, which applies to applications without a limit, and clears it', async () => {
    const tenant = await t.tenant();
    const set = await cli('--tenant', tenant.tenant.id, '--limit', '1', '--window-seconds', '3600', '--json');
    expect(set.stderr).toBe('');
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ tenant_id: tenant.tenant.id, default_rate_limit: { limit: 1, window_seconds: 3600 } });
    // The CLI is another process, and this test app keeps its cache versions in memory (no REDIS_URL): keys it has
    // cached are invalidated by a change elsewhere only when both share Redis (replicas.test.ts). A new key is read
    // from the database, with the tenant's default.
    const fresh = await createApplication(t, tenant.key, { name: 'fresh', type: 'management', permissions: ['application:read'] });
    expect((await as(t, fresh.key).get('/applications/key').expect(200)).headers['ratelimit-policy']).toBe('"application";q=1;w=3600');
    expectProblem(await as(t, fresh.key).get('/applications/key'), 429);

    const cleared = await cli('--tenant', tenant.tenant.id, '--clear');
    expect(cleared.code).toBe(0);
    expect(cleared.stdout).toBe(`tenant ${tenant.tenant.id}: default rate limit removed\n`);
    const again = await createApplication(t, tenant.key, { name: 'again', type: 'management', permissions: ['application:read'] });
    expect((await as(t, again.key).get('/applications/key').expect(200)).headers['ratelimit']).toBeUndefined();
    const messages = (await auditEvents(t, { entityId: tenant.tenant.id })).map((e) => e.message);
    expect(messages.slice(-2)).toEqual([
      expect.stringMatching(/default rate limit set to 1 request per 3600 s \(was none\)$/),
      expect.stringMatching(/default rate limit removed \(was 1 request per 3600 s\)$/),
    ]);
  });

  it('refuses bad usage with exit code 2 and the usage, in one line', async () => {
    const result = await cli('--tenant', 'nope', '--limit', '5', '--window-seconds', '60');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^gatehouse: tenant rate-limit: --tenant must be a tenant id .*\(usage: gatehouse tenant rate-limit --tenant ID .*\)\n$/);
  });

  it('refuses a window beyond a day and an unknown tenant with exit code 1, changing nothing', async () => {
    const tenant = await t.tenant();
    const tooLong = await cli('--tenant', tenant.tenant.id, '--limit', '5', '--window-seconds', '86401');
    expect(tooLong.code).toBe(1);
    expect(tooLong.stderr).toMatch(/rate_limit.window_seconds/);
    const unknown = await cli('--tenant', '7d0f4a8e-1c2b-4d3e-9f60-123456789abc', '--limit', '5', '--window-seconds', '60');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/Tenant not found/);
    expect((await auditEvents(t, { entityId: tenant.tenant.id })).filter((e) => e.operation === 'update')).toEqual([]);
  });
});
