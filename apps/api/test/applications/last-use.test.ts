import { LastUseRecorder } from '@gatehouse/domain';
import { TestApp } from '@gatehouse/test-support/test-app';
import { appWithTenant, as, Caller, createApplication, expectProblem } from '../support/application-fixtures';

/** `last_used_at` and the `unused_since` filter (issue 14 part 3). */
describe('last use of keys', () => {
  let t: TestApp;
  let admin: Caller;
  beforeAll(async () => ({ t, admin } = await appWithTenant()));
  afterAll(() => t?.close());

  const reader = (name: string) => createApplication(t, admin.key, { name, type: 'management', permissions: ['application:read'] });
  const listed = async (query: string) =>
    (await as(t, admin.key).get(`/applications?size=100${query}`).expect(200)).body.data as Array<{ id: string; last_used_at?: string }>;
  const lastUsed = async (id: string) =>
    (await t.database.dataSource.query('SELECT last_used_at FROM applications WHERE id = $1', [id]))[0].last_used_at as Date | null;

  it('is written in the background, to the minute, never on the request path', async () => {
    const app = await reader('used');
    const before = Date.now();
    await as(t, app.key).get('/applications/key').expect(200);
    // The request has been answered; nothing was written on its way.
    expect(await lastUsed(app.id)).toBeNull();
    await t.app.get(LastUseRecorder).flush();
    const at = (await lastUsed(app.id))!;
    expect(at.getTime() % 60_000).toBe(0);
    expect(at.getTime()).toBeGreaterThan(before - 60_000);
    expect(at.getTime()).toBeLessThanOrEqual(Date.now());
    const item = (await listed(`&id=${app.id}`))[0]!;
    expect(item.last_used_at).toBe(at.toISOString());
  });

  it('does not count a key that failed', async () => {
    const app = await reader('idle');
    // Its last character changed (to another one: a key ending in 'x' would otherwise stay valid, one run in 60 or so).
    const wrong = `${app.key.slice(0, -1)}${app.key.endsWith('x') ? 'y' : 'x'}`;
    expectProblem(await t.http().get('/applications/key').set('svc-api-key', wrong), 401);
    await t.app.get(LastUseRecorder).flush();
    expect(await lastUsed(app.id)).toBeNull();
  });

  it('lists the applications unused since a date, never-used ones included', async () => {
    const used = await reader('recently used');
    const never = await reader('never used');
    const stale = await reader('used long ago');
    await as(t, used.key).get('/applications/key').expect(200);
    await t.app.get(LastUseRecorder).flush();
    await t.database.dataSource.query(`UPDATE applications SET last_used_at = '2026-01-01T10:00:00Z' WHERE id = $1`, [stale.id]);
    const ids = (await listed(`&unused_since=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`)).map((a) => a.id);
    expect(ids).toContain(never.id);
    expect(ids).toContain(stale.id);
    expect(ids).not.toContain(used.id);
    const older = (await listed('&unused_since=2025-12-31')).map((a) => a.id);
    expect(older).toContain(never.id);
    expect(older).not.toContain(stale.id);
    expect(older).not.toContain(used.id);
  });

  it.each(['yesterday', '2026-13-01', '', '1700000000'])('refuses unused_since=%s with a 400', async (value) => {
    expectProblem(await as(t, admin.key).get(`/applications?unused_since=${value}`), 400, ['unused_since']);
  });
});
