import type Redis from 'ioredis';
import { VersionStore } from '@gatehouse/persistence';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { Forwarder, PrivateRedis, startForwarder, startPrivateRedis } from '@gatehouse/test-support/private-redis';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { as, Caller, createApplication, newTenant, VALID } from '../support/application-fixtures';

// Starts its own redis-server and restarts it; the app reconnects with ioredis's backoff.
jest.setTimeout(60_000);

const COUNT_KEY = (name: string) => `gatehouse:cache-version:${name}`;

/** Until the service's version store reads versions from Redis again (it reconnects with a backoff). */
async function versionsReadable(t: TestApp, name: string): Promise<void> {
  const store = t.app.get(VersionStore);
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    if ((await store.read(name)) !== null) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the version store did not reconnect within 30 s');
}

/**
 * Revocation is immediate whatever happens to Redis (CONTRACT.md section 11). Redis here runs without persistence, as
 * in many deployments, on a private redis-server this test starts (never the machine's). Each test caches a key or a
 * proxy, restarts or flushes Redis, then brings the shared change count back to the value the entry was cached under
 * (the collision a plain counter restarted from zero would meet), revokes, and expects the very next request to see it.
 */
describe('revocation through a Redis restart or flush', () => {
  let redis: PrivateRedis;
  let client: Redis;
  let t: TestApp;
  let admin: Caller;
  let upstream: Upstream;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    client = redis.client();
    upstream = await startUpstream((req, res) => res.end('ok'));
    t = await startTestApp({
      REDIS_URL: redis.url,
      QUEUE_PREFIX: `revocation-${process.pid}`,
      PROXY_ALLOW_HTTP: 'true',
      PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
      REACTOR_POOL_SIZE: '1',
    });
    admin = await newTenant(t);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await upstream?.stop();
    await redis?.stop();
  });

  const count = async (name: string) => Number((await client.hget(COUNT_KEY(name), 'count')) ?? 0);

  async function lose(what: 'restart' | 'flush'): Promise<void> {
    if (what === 'restart') await redis.restart();
    else await client.flushall();
  }

  /** `n` committed changes of applications, each one bump, as a busy tenant makes. */
  async function applicationChanges(n: number): Promise<void> {
    if (n <= 0) return;
    const spare = await createApplication(t, admin.key, VALID.public);
    for (let i = 1; i < n; i++)
      await as(t, admin.key)
        .put(`/applications/${spare.id}`, { name: `spare ${i}`, permissions: ['token:create'] })
        .expect(200);
  }

  /** `n` committed changes of proxies. */
  async function proxyChanges(n: number): Promise<void> {
    if (n <= 0) return;
    const spare = await as(t, admin.key).post('/proxies', { name: 'spare', destination_url: upstream.origin }).expect(201);
    for (let i = 1; i < n; i++) {
      await t
        .http()
        .patch(`/proxies/${spare.body.id}`)
        .set('svc-api-key', admin.key)
        .set('content-type', 'application/merge-patch+json')
        .send({ name: `spare ${i}` })
        .expect(200);
    }
  }

  it.each(['restart', 'flush'] as const)('a key deleted after a Redis %s stops authenticating on the next request', async (what) => {
    await versionsReadable(t, 'applications');
    const victim = await createApplication(t, admin.key, VALID.private);
    await as(t, victim.key).get('/permissions').expect(200);
    await as(t, victim.key).get('/permissions').expect(200); // served from the cache
    const cachedAt = await count('applications');

    await lose(what);
    await versionsReadable(t, 'applications');
    await applicationChanges(cachedAt - 1);
    await as(t, admin.key).delete(`/applications/${victim.id}`).expect(204);
    expect(await count('applications')).toBe(cachedAt); // where a plain counter would match the cached entry again

    await as(t, victim.key).get('/permissions').expect(401);
  });

  it.each(['restart', 'flush'] as const)('a key regenerated after a Redis %s stops authenticating on the next request', async (what) => {
    await versionsReadable(t, 'applications');
    const victim = await createApplication(t, admin.key, VALID.private);
    await as(t, victim.key).get('/permissions').expect(200);
    const cachedAt = await count('applications');

    await lose(what);
    await versionsReadable(t, 'applications');
    await applicationChanges(cachedAt - 1);
    await as(t, admin.key).post(`/applications/${victim.id}/regenerate`).expect(200);
    expect(await count('applications')).toBe(cachedAt);

    await as(t, victim.key).get('/permissions').expect(401);
  });

  it.each(['restart', 'flush'] as const)('a proxy deleted after a Redis %s stops forwarding on the next request', async (what) => {
    await versionsReadable(t, 'proxy');
    const created = await as(t, admin.key).post('/proxies', { name: 'victim', destination_url: upstream.origin, require_auth: false }).expect(201);
    const invoke = () => t.http().get('/proxy/x').set('svc-proxy-key', created.body.key);
    await invoke().expect(200);
    await invoke().expect(200); // served from the cache
    const cachedAt = await count('proxy');

    await lose(what);
    await versionsReadable(t, 'proxy');
    await proxyChanges(cachedAt - 1);
    await as(t, admin.key).delete(`/proxies/${created.body.id}`).expect(204);
    expect(await count('proxy')).toBe(cachedAt);

    const res = await invoke();
    expect(res.status).toBe(404);
  });
});

/**
 * A failover to a replica that missed the last writes: the service reaches Redis through an address (here a TCP
 * forwarder) that moves from the primary to a replica which stopped replicating just before a revocation. The replica
 * holds the same epoch and count the revoked key was cached under; only the instance differs.
 */
describe('revocation through a Redis failover to a replica that lost writes', () => {
  let primary: PrivateRedis;
  let replica: PrivateRedis;
  let forwarder: Forwarder;
  let t: TestApp;

  beforeAll(async () => {
    primary = await startPrivateRedis();
    replica = await startPrivateRedis();
    forwarder = await startForwarder(primary.port);
    t = await startTestApp({ REDIS_URL: forwarder.url, QUEUE_PREFIX: `failover-${process.pid}` });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await forwarder?.stop();
    await primary?.stop();
    await replica?.stop();
  });

  it('a key deleted just before the failover stops authenticating on the next request', async () => {
    const admin = await newTenant(t);
    await versionsReadable(t, 'applications');
    const victim = await createApplication(t, admin.key, VALID.private);
    await as(t, victim.key).get('/permissions').expect(200);
    await as(t, victim.key).get('/permissions').expect(200); // served from the cache

    // The replica copies the primary, then stops replicating: it has what the cached entry was cached under.
    const replicaClient = replica.client();
    const primaryClient = primary.client();
    await replicaClient.replicaof('127.0.0.1', primary.port);
    const cachedVersion = await primaryClient.hgetall(COUNT_KEY('applications'));
    for (const deadline = Date.now() + 20_000; ;) {
      const copied = await replicaClient.hgetall(COUNT_KEY('applications')).catch(() => ({}));
      if (JSON.stringify(copied) === JSON.stringify(cachedVersion)) break;
      if (Date.now() > deadline) throw new Error('the replica did not catch up');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await replicaClient.replicaof('NO', 'ONE');

    await as(t, admin.key).delete(`/applications/${victim.id}`).expect(204); // bumped on the primary only
    forwarder.switchTo(replica.port);
    expect(await replicaClient.hgetall(COUNT_KEY('applications'))).toEqual(cachedVersion);
    await versionsReadable(t, 'applications');

    await as(t, victim.key).get('/permissions').expect(401);
  });
});
