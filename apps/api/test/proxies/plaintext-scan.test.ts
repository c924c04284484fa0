import { randomBytes } from 'node:crypto';
import { findPlaintext } from '@gatehouse/test-support/plaintext-scan';
import { TEST_REDIS_URL } from '@gatehouse/test-support/test-env';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';

/** Issue 24: no proxy key or configuration value is ever in PostgreSQL or Redis in plaintext. */
describe('plaintext scan: proxies', () => {
  let t: TestApp;
  let upstream: Upstream;
  beforeAll(async () => {
    upstream = await startUpstream((_req, res) => res.end('ok'));
    t = await startTestApp({
      REDIS_URL: TEST_REDIS_URL,
      QUEUE_PREFIX: `scan-${randomBytes(4).toString('hex')}`,
      PROXY_ALLOW_HTTP: 'true',
      PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
      REACTOR_POOL_SIZE: '1',
    });
  });
  afterAll(async () => {
    await t?.close();
    await upstream?.stop();
  });

  it('finds neither a configuration secret nor a proxy key in any table or Redis key after they were created, read, changed and used', async () => {
    const { key: admin } = await t.tenant();
    const secrets: string[] = [];
    for (let i = 0; i < 3; i++) {
      const secret = `sk_live_scan_${randomBytes(12).toString('hex')}`;
      const created = await t
        .http()
        .post('/proxies')
        .set('svc-api-key', admin)
        .send({ name: `scan ${i}`, destination_url: `${upstream.origin}/`, configuration: { STRIPE_SECRET: secret }, require_auth: false })
        .expect(201);
      expect(created.body.configuration).toEqual({ STRIPE_SECRET: secret });
      const read = await t.http().get(`/proxies/${created.body.id}`).set('svc-api-key', admin).expect(200);
      expect(read.body.key).toBe(created.body.key);
      expect(read.body.configuration).toEqual({ STRIPE_SECRET: secret });
      const changed = `${secret}_v2`;
      await t
        .http()
        .patch(`/proxies/${created.body.id}`)
        .set('svc-api-key', admin)
        .set('content-type', 'application/merge-patch+json')
        .send({ configuration: { STRIPE_SECRET: changed } })
        .expect(200);
      await t.http().get('/proxy/x').set('svc-proxy-key', created.body.key).expect(200);
      secrets.push(secret, changed, created.body.key);
    }
    const list = await t.http().get('/proxies').set('svc-api-key', admin).expect(200);
    expect(list.body.data.map((p: { key: string }) => p.key)).toEqual(expect.arrayContaining([secrets[2], secrets[5], secrets[8]]));

    expect(await findPlaintext(t.database.dataSource, TEST_REDIS_URL, secrets)).toEqual([]);
    // The scan itself finds what is there.
    await t.database.dataSource.query(`UPDATE proxies SET name = $1 WHERE key_hash IS NOT NULL AND name = 'scan 0'`, [secrets[2]!.slice(0, 40)]);
    expect(await findPlaintext(t.database.dataSource, TEST_REDIS_URL, [secrets[2]!.slice(0, 40)])).toContain('table public.proxies holds secret #0');
  });
});
