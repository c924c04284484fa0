import { randomUUID } from 'node:crypto';
import { RateLimiter } from '@gatehouse/domain';
import { TcpForwarder } from '@gatehouse/test-support/tcp-forwarder';
import { captureLog } from '@gatehouse/test-support/log-capture';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { TEST_REDIS_URL } from '@gatehouse/test-support/test-env';
import { as, Caller, createApplication, expectProblem, newTenant, selfRelimitAttack } from '../support/application-fixtures';

/** With REDIS_URL the limits live in Redis; when it cannot be reached, requests go through (fail open) and it is said. */
describe('rate limits over Redis', () => {
  let t: TestApp;
  let admin: Caller;
  const forwarder = new TcpForwarder('127.0.0.1', Number(new URL(TEST_REDIS_URL).port || 6379));
  const log = captureLog('warn');

  beforeAll(async () => {
    await forwarder.start();
    t = await startTestApp({ REDIS_URL: `redis://127.0.0.1:${forwarder.port}/15`, QUEUE_PREFIX: `rl-${randomUUID()}` }, { logger: log.nest });
    admin = await newTenant(t);
  });
  afterAll(async () => {
    await t?.close();
    await forwarder.stop();
  });

  it('gives no fresh burst to a key that changes its own limit (5/600 to 5/601, 5/602...), counted in Redis', async () => {
    // At most its burst of 5 (each policy a new bucket served 60); fewer when a count made with the limit the key
    // cache held a moment before a change lands in the same bucket as the verified one (it counts, never uncounts).
    const served = await selfRelimitAttack(t, admin);
    expect(served).toBeGreaterThan(0);
    expect(served).toBeLessThanOrEqual(5);
  });

  it('fails open while Redis is unreachable, with a warning and a count, and enforces again once it is back', async () => {
    const app = await createApplication(t, admin.key, {
      name: 'limited',
      type: 'management',
      permissions: ['application:read'],
      rate_limit: { limit: 2, window_seconds: 600 },
    });
    await as(t, app.key).get('/applications/key').expect(200);
    await as(t, app.key).get('/applications/key').expect(200);
    expectProblem(await as(t, app.key).get('/applications/key'), 429);

    await forwarder.stop();
    const stats = t.app.get(RateLimiter).stats;
    const before = stats.failedOpen;
    for (let i = 0; i < 5; i++) {
      const res = await as(t, app.key).get('/applications/key').expect(200);
      expect(res.headers['ratelimit']).toBeUndefined();
    }
    expect(stats.failedOpen - before).toBe(5);
    const warnings = log.lines().filter((line) => /Redis is unreachable: rate limits .*\(fail open\)/.test(String(line.msg)));
    // One warning for the outage, not one per request.
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.level).toBe('warn');

    await forwarder.start();
    // ioredis reconnects on its own; until then requests still fail open.
    let status = 200;
    for (let i = 0; i < 100 && status === 200; i++) {
      status = (await as(t, app.key).get('/applications/key')).status;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(429);
  });
});
