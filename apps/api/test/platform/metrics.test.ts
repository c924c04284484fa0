import { gatehouseVersion } from '@gatehouse/config';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { createPassThroughProxy, postAs, ServiceProcess, startServiceProcess, WORKER_MAIN } from '@gatehouse/test-support/service-process';
import { startTestApp } from '@gatehouse/test-support/test-app';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '@gatehouse/test-support/test-env';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';

jest.setTimeout(90_000);

function metricsPortOf(service: ServiceProcess): number {
  const match = /"metrics_port":(\d+)/.exec(service.stdout());
  if (!match) throw new Error(`no metrics line in:\n${service.output()}`);
  return Number(match[1]);
}

async function scrape(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return res.text();
}

/** The value of one sample (`name{labels} value`) whose labels include all of `labels`; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

/** An address of this host that is not loopback (none: the bind checks are skipped). */
function externalAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
}

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.setTimeout(5_000, () => socket.destroy());
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });
}

/** The built service's Prometheus endpoint, on METRICS_PORT and nowhere else, moving with traffic. */
describe('metrics', () => {
  let upstream: Upstream;
  let key: string;

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    });
    const admin = await startTestApp();
    ({ key } = await admin.tenant());
    await admin.close();
  });
  afterAll(() => upstream?.stop());

  it('the api serves them on METRICS_PORT, not on its public port, and they move when traffic passes', async () => {
    const api = await startServiceProcess({
      DATABASE_URL: TEST_DATABASE_URL,
      METRICS_PORT: '0',
      PROXY_ALLOW_HTTP: 'true',
      PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
      REACTOR_POOL_SIZE: '1',
      AUTH_THROTTLE_LIMIT: '1',
    });
    try {
      const metricsPort = metricsPortOf(api);
      expect(metricsPort).not.toBe(api.port);
      // METRICS_HOST unset: loopback only. The public port answers on every interface, the metrics one does not.
      expect(api.stdout()).toContain(`"metrics_host":"127.0.0.1","metrics_port":${metricsPort}`);
      const external = externalAddress();
      if (external) {
        expect(await accepts(external, api.port)).toBe(true);
        expect(await accepts(external, metricsPort)).toBe(false);
      }
      expect((await fetch(`${api.baseUrl}/metrics`)).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${metricsPort}/applications`)).status).toBe(404);

      const before = await scrape(metricsPort);
      const route = { method: 'GET', route: '/applications/key', status: '200', service: 'gatehouse-api' };
      const countBefore = sample(before, 'gatehouse_http_request_duration_seconds_count', route) ?? 0;
      // The process's own figures and the jobs run here (no Redis) are there before any traffic.
      expect(sample(before, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
      // The release and Node.js version this process runs.
      expect(sample(before, 'gatehouse_build_info', { version: gatehouseVersion(), node_version: process.versions.node, service: 'gatehouse-api' })).toBe(1);
      expect(sample(before, 'gatehouse_audit_outbox_rows')).toBeGreaterThanOrEqual(0);
      expect(sample(before, 'gatehouse_audit_outbox_oldest_age_seconds')).toBeGreaterThanOrEqual(0);
      expect(sample(before, 'gatehouse_expiry_lag_seconds')).toBeGreaterThanOrEqual(0);
      expect(sample(before, 'gatehouse_queue_jobs', { queue: 'in-process', state: 'waiting' })).toBeGreaterThanOrEqual(0);

      for (let i = 0; i < 3; i++) expect((await fetch(`${api.baseUrl}/applications/key`, { headers: { 'svc-api-key': key } })).status).toBe(200);
      expect((await fetch(`${api.baseUrl}/applications`, { headers: { 'svc-api-key': `key_${'0'.repeat(40)}` } })).status).toBe(401);

      const proxyKey = await createPassThroughProxy(api, key, upstream.origin);
      for (let i = 0; i < 2; i++) expect((await fetch(`${api.baseUrl}/proxy/x`, { headers: { 'svc-proxy-key': proxyKey } })).status).toBe(200);
      // Past AUTH_THROTTLE_LIMIT the address is throttled (for every key, so last).
      expect((await fetch(`${api.baseUrl}/applications`, { headers: { 'svc-api-key': `key_${'1'.repeat(40)}` } })).status).toBe(429);

      const after = await scrape(metricsPort);
      expect(sample(after, 'gatehouse_http_request_duration_seconds_count', route)).toBe(countBefore + 3);
      expect(sample(after, 'gatehouse_http_request_duration_seconds_count', { route: '/applications', status: '401' })).toBe(1);
      expect(sample(after, 'gatehouse_http_request_duration_seconds_count', { method: 'GET', route: '/proxy/*', status: '200' })).toBe(2);
      expect(sample(after, 'gatehouse_proxy_destination_duration_seconds_count', { status: '200' })).toBe(2);
      expect(sample(after, 'gatehouse_proxy_transform_duration_seconds_count')).toBe(2);
      expect(sample(after, 'gatehouse_reactor_sandboxes')).toBeGreaterThanOrEqual(1);
      expect(sample(after, 'gatehouse_reactor_busy')).toBe(0);
      // Each transform run waited for a sandbox process (the first for the pool to start), and ran.
      expect(sample(after, 'gatehouse_reactor_queue_wait_seconds_count', { outcome: 'ran' })).toBe(2);
      expect(sample(after, 'gatehouse_reactor_queue_wait_seconds_sum', { outcome: 'ran' })).toBeGreaterThan(0);
      expect(sample(after, 'gatehouse_reactor_catastrophic_errors_total')).toBe(0);
      // Authentication looked the key up in the cache: after the first, the lookups hit.
      expect(sample(after, 'gatehouse_cache_lookups_total', { cache: 'key', result: 'hit' })).toBeGreaterThanOrEqual(2);
      expect(sample(after, 'gatehouse_cache_lookups_total', { cache: 'proxy', result: 'hit' })).toBeGreaterThanOrEqual(1);
      expect(sample(after, 'gatehouse_auth_throttle_requests_total', { outcome: 'throttled' })).toBe(1);
      expect(sample(after, 'gatehouse_rate_limit_requests_total', { outcome: 'failed_open' })).toBe(0);
      // The proxy's creation was an audited change: its log job ran in this process.
      for (let i = 0; i < 50 && !sample(await scrape(metricsPort), 'gatehouse_job_duration_seconds_count', { outcome: 'completed' }); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const jobs = await scrape(metricsPort);
      expect(sample(jobs, 'gatehouse_job_duration_seconds_count', { queue: 'audit-logs', outcome: 'completed' })).toBeGreaterThanOrEqual(1);
      expect(sample(jobs, 'gatehouse_job_wait_seconds_count', { queue: 'audit-logs' })).toBeGreaterThanOrEqual(1);
    } finally {
      expect(await api.stop()).toBe(0);
    }
  });

  it('the worker serves its jobs, queue depths and outbox backlog on METRICS_PORT', async () => {
    const env = { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: `metrics-${randomBytes(4).toString('hex')}` };
    const worker = await startServiceProcess({ ...env, METRICS_PORT: '0' }, [], WORKER_MAIN, /"msg":"gatehouse worker running"/);
    const api = await startServiceProcess(env, ['--api-only']);
    try {
      const metricsPort = metricsPortOf(worker);
      const created = await postAs(api, key, '/applications', { name: 'audited', type: 'private', permissions: ['token:read'] });
      expect(created.status).toBe(201);
      let text = '';
      for (let i = 0; i < 100; i++) {
        text = await scrape(metricsPort);
        if (sample(text, 'gatehouse_job_duration_seconds_count', { queue: 'audit-logs', outcome: 'completed' })) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(
        sample(text, 'gatehouse_job_duration_seconds_count', { queue: 'audit-logs', outcome: 'completed', service: 'gatehouse-worker' }),
      ).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'gatehouse_queue_jobs', { queue: 'audit-logs', state: 'failed' })).toBe(0);
      expect(sample(text, 'gatehouse_queue_jobs', { queue: 'application-expiry', state: 'waiting' })).toBeGreaterThanOrEqual(0);
      expect(sample(text, 'gatehouse_audit_outbox_rows')).toBeGreaterThanOrEqual(0);
      expect(sample(text, 'gatehouse_expiry_lag_seconds')).toBeGreaterThanOrEqual(0);
      expect(sample(text, 'gatehouse_build_info', { version: gatehouseVersion(), service: 'gatehouse-worker' })).toBe(1);
      // The api without METRICS_PORT opens no metrics listener.
      expect(api.stdout()).not.toContain('metrics_port');
    } finally {
      await api.stop();
      expect(await worker.stop()).toBe(0);
    }
  });

  it('METRICS_HOST binds the listener elsewhere: 0.0.0.0, as the image sets it, lets another host scrape', async () => {
    const api = await startServiceProcess({ DATABASE_URL: TEST_DATABASE_URL, METRICS_PORT: '0', METRICS_HOST: '0.0.0.0', REACTOR_POOL_SIZE: '1' });
    try {
      const metricsPort = metricsPortOf(api);
      expect(api.stdout()).toContain(`"metrics_host":"0.0.0.0","metrics_port":${metricsPort}`);
      const external = externalAddress();
      if (external) expect(await accepts(external, metricsPort)).toBe(true);
      expect(await scrape(metricsPort)).toContain('gatehouse_build_info');
    } finally {
      await api.stop();
    }
  });
});
