import { Registry } from 'prom-client';
import { captureLog } from '@gatehouse/test-support/log-capture';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { registerRateLimitMetrics } from '../../src/rate-limits/rate-limit-metrics';
import { as, Caller, createApplication, expectProblem, newTenant } from '../support/application-fixtures';

/**
 * Issue 22 section 3: behind a load balancer without TRUSTED_PROXIES every client has the balancer's address (here,
 * every supertest connection is 127.0.0.1), and the throttle refused every key from a blocked address: one guesser
 * locked everyone out. Now the keys that authenticated from that address before are still served while the guesses
 * are refused unseen; the service warns that it sees X-Forwarded-For without trusted proxies, and counts blocked
 * addresses.
 */
describe('failed-authentication throttle behind one shared address', () => {
  let t: TestApp;
  let admin: Caller;
  let upstream: Upstream;
  const log = captureLog('warn');
  const LIMIT = 3;

  beforeAll(async () => {
    upstream = await startUpstream((_req, res) => res.end('ok'));
    t = await startTestApp(
      { AUTH_THROTTLE_LIMIT: String(LIMIT), AUTH_THROTTLE_WINDOW_SECONDS: '600', PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8' },
      { logger: log.nest },
    );
    admin = await newTenant(t);
  });
  afterAll(async () => {
    await t?.close();
    await upstream?.stop();
  });

  const guess = (i: number) => `key_${String(i).padStart(40, 'G')}`;
  const blockedAddresses = async () => {
    const registry = new Registry();
    registerRateLimitMetrics(registry, t.app);
    return (await registry.getMetricsAsJSON()).find((m) => m.name === 'gatehouse_auth_throttle_blocked_addresses')?.values[0]?.value;
  };

  it('serves the keys in use from the address while the guesser is refused, and warns once about X-Forwarded-For', async () => {
    const neighbour = await createApplication(t, admin.key, { name: 'neighbour', type: 'private', permissions: ['proxy:invoke'] });
    const guarded = (await as(t, admin.key).post('/proxies', { name: 'guarded', destination_url: upstream.origin }).expect(201)).body.key as string;
    const open = (await as(t, admin.key).post('/proxies', { name: 'open', destination_url: upstream.origin, require_auth: false }).expect(201)).body
      .key as string;
    // The neighbours at work, before the guesser starts: through the balancer, which adds X-Forwarded-For.
    await as(t, admin.key).get('/applications/key').set('x-forwarded-for', '198.51.100.1').expect(200);
    await t.http().get('/proxy').set('svc-proxy-key', guarded).set('svc-api-key', neighbour.key).expect(200);
    await t.http().get('/proxy').set('svc-proxy-key', open).expect(200);
    const warnings = () => log.lines().filter((line) => /X-Forwarded-For but TRUSTED_PROXIES is empty/.test(String(line.msg)));
    expect(warnings()).toHaveLength(1);
    expect(await blockedAddresses()).toBe(0);

    // The guesser, behind the same balancer.
    for (let i = 0; i < LIMIT; i++) expectProblem(await t.http().get('/applications').set('svc-api-key', guess(i)).set('x-forwarded-for', '203.0.113.66'), 401);
    for (let i = LIMIT; i < LIMIT + 10; i++) expectProblem(await t.http().get('/applications').set('svc-api-key', guess(i)), 429);
    expectProblem(await t.http().get('/proxy').set('svc-proxy-key', 'G'.repeat(32)), 429);
    expect(await blockedAddresses()).toBe(1);

    // Everyone who was at work from the address still is.
    for (let i = 0; i < 3; i++) {
      await as(t, admin.key).get('/applications/key').expect(200);
      await t.http().get('/proxy').set('svc-proxy-key', guarded).set('svc-api-key', neighbour.key).expect(200);
      await t.http().get('/proxy').set('svc-proxy-key', open).expect(200);
    }
    // A key first seen from there during the block is refused unseen like a guess (a right guess must not be told apart).
    const late = await createApplication(t, admin.key, { name: 'late', type: 'management', permissions: ['application:read'] });
    expectProblem(await as(t, late.key).get('/applications/key'), 429);
    expect(warnings()).toHaveLength(1);
  });
});
