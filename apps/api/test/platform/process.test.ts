import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_MAIN, firstManagementKey, runToCompletion, startServiceProcess } from '@gatehouse/test-support/service-process';
import { startTestApp } from '@gatehouse/test-support/test-app';
import { TEST_DATABASE_URL } from '@gatehouse/test-support/test-env';

/** The built service as `npm start`, `npm run cli` and deployments run it. */
describe('the service process', () => {
  it('on an empty embedded database creates tenant default, prints its key once on stderr, and keeps its data across restarts', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-embedded-'));
    try {
      const first = await startServiceProcess({ DATA_DIR: dataDir });
      const key = await firstManagementKey(first);
      // The banner goes to stderr: the JSON log stream (stdout) never holds a key, and every line of it is JSON.
      expect(first.stdout()).not.toContain(key);
      for (const line of first.stdout().split('\n').filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
      const me = await fetch(`${first.baseUrl}/applications/key`, { headers: { 'SVC-API-KEY': key } });
      expect(me.status).toBe(200);
      expect(await me.json()).toMatchObject({ type: 'management', permissions: expect.arrayContaining(['application:create', 'log:read']) });
      expect(await first.stop('SIGTERM')).toBe(0);

      const second = await startServiceProcess({ DATA_DIR: dataDir });
      expect(second.output()).not.toMatch(/shown once/);
      expect((await fetch(`${second.baseUrl}/applications/key`, { headers: { 'svc-api-key': key } })).status).toBe(200);
      expect(await second.stop('SIGTERM')).toBe(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);

  it('drains an in-flight request on SIGTERM, refuses new ones, then exits 0', async () => {
    const admin = await startTestApp();
    const { key } = await admin.tenant();
    await admin.close();
    const service = await startServiceProcess({ DATABASE_URL: TEST_DATABASE_URL }, ['--api-only']);
    // A request whose body is still arriving when SIGTERM lands: it is in flight and must complete.
    const body = JSON.stringify({ name: 'drained', type: 'private', permissions: ['token:read'] });
    const response = new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${service.baseUrl}/applications`, {
        method: 'POST',
        headers: { 'svc-api-key': key, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => {
        service.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(10)), 300);
      }, 200);
    });
    expect(await response).toBe(201);
    expect(await service.exited).toBe(0);
    expect(service.output()).toMatch(/"msg":"stopped"/);
    await expect(fetch(`${service.baseUrl}/health/live`)).rejects.toThrow();
  });

  it.each([
    ['PORT', 'abc'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'not a url'],
    ['PROXY_ALLOW_HTTP', 'maybe'],
    ['PROXY_ALLOWED_PRIVATE_CIDRS', '10.0.0.0/33'],
    ['LOG_LEVEL', 'loud'],
  ])('refuses to start when %s=%s, with one line naming it', async (name, value) => {
    const result = await runToCompletion(API_MAIN, [], { [name]: value });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(name);
    expect(result.stdout).toBe('');
  });
});
