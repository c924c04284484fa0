import type { LoggerService } from '@nestjs/common';
import type { Response } from 'supertest';
import { PrivatePostgres, startMigratedPrivatePostgres } from '@gatehouse/test-support/private-postgres';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { as, Caller, createApplication, newTenant, VALID } from '../support/application-fixtures';

// initdb, and a PostgreSQL stopped and started several times.
jest.setTimeout(180_000);

/**
 * While PostgreSQL is down or restarting, every request that needs it answers 503 ProblemDetails with Retry-After,
 * never 500 (CONTRACT.md section 11), and the service serves again once it is back. Against a cluster of this test's
 * own, stopped for real (fast shutdown and crash) while a mix of requests runs.
 */
describe('PostgreSQL outages over HTTP', () => {
  let pg: PrivatePostgres;
  let t: TestApp;
  let upstream: Upstream;
  let admin: Caller;
  let backend: { id: string; key: string };
  let proxyKey: string;
  /** What the API logged as an unexpected error (the stack of a 500), so a failure says what broke. */
  const unexpected: string[] = [];
  const logger: LoggerService = {
    log: () => undefined,
    warn: () => undefined,
    error: (message: unknown, stack?: unknown) => unexpected.push(`${String(message)}\n${typeof stack === 'string' ? stack : ''}`),
  };

  beforeAll(async () => {
    pg = await startMigratedPrivatePostgres();
    upstream = await startUpstream((req, res) => res.end('ok'));
    t = await startTestApp({ DATABASE_URL: pg.url, PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', REACTOR_POOL_SIZE: '1' }, { logger });
    admin = await newTenant(t);
    backend = await createApplication(t, admin.key, { ...VALID.private, permissions: ['proxy:invoke'] });
    const proxy = await as(t, admin.key).post('/proxies', { name: 'p', destination_url: upstream.origin }).expect(201);
    proxyKey = proxy.body.key;
  });
  afterAll(async () => {
    await t?.close().catch(() => undefined);
    await upstream?.stop();
    pg?.remove();
  });
  afterEach(() => {
    if (!pg.running()) pg.start();
  });

  /** One of each kind of request that needs (or may need) the database. */
  const REQUESTS: [string, () => Promise<Response>][] = [
    ['list applications', () => as(t, admin.key).get('/applications')],
    ['get an application', () => as(t, admin.key).get(`/applications/${backend.id}`)],
    ['create an application (transaction)', () => as(t, admin.key).post('/applications', VALID.public)],
    ['update an application (row lock, transaction)', () => as(t, admin.key).put(`/applications/${backend.id}`, { name: 'b', permissions: ['proxy:invoke'] })],
    ['an unknown key (a lookup by key hash)', () => as(t, `key_${'x'.repeat(40)}`).get('/permissions')],
    ['list proxies', () => as(t, admin.key).get('/proxies')],
    ['create a proxy', () => as(t, admin.key).post('/proxies', { name: 'q', destination_url: upstream.origin })],
    ['list logs', () => as(t, admin.key).get('/logs')],
    ['invoke a proxy with require_auth', () => t.http().get('/proxy/x').set('svc-proxy-key', proxyKey).set('svc-api-key', backend.key)],
    ['invoke an unknown proxy', () => t.http().get('/proxy/x').set('svc-proxy-key', 'Z'.repeat(32))],
  ];

  /** Fires every kind of request in rounds until `during` settles, then for `afterMs` more; returns each answer. */
  async function hammer(during: Promise<unknown>, afterMs = 300): Promise<[string, Response][]> {
    const answers: [string, Response][] = [];
    let settled = false;
    void during.finally(() => setTimeout(() => (settled = true), afterMs));
    while (!settled) {
      const round = await Promise.all(REQUESTS.map(async ([name, send]) => [name, await send()] as [string, Response]));
      answers.push(...round);
    }
    await during;
    return answers;
  }

  function expectNo500s(answers: [string, Response][]) {
    const statuses = answers.map(([name, res]) => `${name}: ${res.status}`);
    const failures = answers.filter(([, res]) => res.status >= 500 && res.status !== 503);
    const reported = unexpected.filter((entry) => !entry.startsWith('dependency unavailable'));
    expect(failures.map(([name, res]) => `${name}: ${res.status} ${JSON.stringify(res.body)}`).concat(failures.length ? reported : [])).toEqual([]);
    const unavailable = answers.filter(([, res]) => res.status === 503);
    expect(unavailable.length).toBeGreaterThan(0);
    for (const [, res] of unavailable) {
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      expect(res.body).toMatchObject({ status: 503, detail: 'A dependency is unavailable; retry later' });
    }
    return statuses;
  }

  async function expectServingAgain() {
    for (const deadline = Date.now() + 30_000; ;) {
      const answers = await Promise.all(REQUESTS.map(([, send]) => send()));
      if (answers.every((res) => res.status < 500)) return;
      if (Date.now() > deadline) throw new Error(`not serving again: ${answers.map((r) => r.status).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it.each([
    ['a fast shutdown', () => pg.stopFast()],
    ['a crash (immediate shutdown)', () => pg.stopImmediate()],
  ])('answers 503 with Retry-After, never 500, through %s and the restart', async (_, stop) => {
    const outage = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      stop();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      pg.start();
    })();
    expectNo500s(await hammer(outage));
    await expectServingAgain();
  });

  it('answers 503 while PostgreSQL stays down, and serves again once it is back', async () => {
    pg.stopFast();
    expectNo500s(await hammer(new Promise((resolve) => setTimeout(resolve, 1000)), 0));
    pg.start();
    await expectServingAgain();
  });
});
