import { TestApp } from '@gatehouse/test-support/test-app';
import { appWithTenant, as, auditEvents, Caller, createApplication, expectProblem } from '../support/application-fixtures';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `POST /applications/{id}/regenerate` with an overlap (issue 14 part 2). */
describe('key rotation with an overlap', () => {
  let t: TestApp;
  let admin: Caller;
  beforeAll(async () => ({ t, admin } = await appWithTenant()));
  afterAll(() => t?.close());

  const reader = () => createApplication(t, admin.key, { name: 'rotated', type: 'management', permissions: ['application:read'] });
  const works = async (key: string) => (await as(t, key).get('/applications/key')).status;
  const regenerate = (id: string, query = '', body?: unknown) => {
    const req = t.http().post(`/applications/${id}/regenerate${query}`).set('svc-api-key', admin.key);
    return body === undefined ? req : req.send(body as object);
  };

  it('keeps the spec behaviour by default: the old key stops at once', async () => {
    const app = await reader();
    const res = await regenerate(app.id).expect(200);
    expect(res.body).not.toHaveProperty('previous_key_expires_at');
    expect(await works(app.key)).toBe(401);
    expect(await works(res.body.key)).toBe(200);
    expect((await regenerate(app.id, '?previous_key_expires_in_seconds=0').expect(200)).body).not.toHaveProperty('previous_key_expires_at');
  });

  it('keeps the previous key working until the time the response and the audit log give', async () => {
    const app = await reader();
    const before = Date.now();
    const res = await regenerate(app.id, '?previous_key_expires_in_seconds=600').expect(200);
    const until = Date.parse(res.body.previous_key_expires_at);
    expect(until).toBeGreaterThanOrEqual(before + 600_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 600_000);
    expect(await works(app.key)).toBe(200);
    expect(await works(res.body.key)).toBe(200);
    expect((await as(t, admin.key).get(`/applications/${app.id}`).expect(200)).body.previous_key_expires_at).toBe(res.body.previous_key_expires_at);
    const events = await auditEvents(t, { entityId: app.id });
    expect(events.at(-1)!.message).toBe(`Application key regenerated; the previous key works until ${res.body.previous_key_expires_at}`);
  });

  it('takes the overlap from the body too, and refuses a query and a body that disagree', async () => {
    const app = await reader();
    const res = await regenerate(app.id, '', { previous_key_expires_in_seconds: 120 }).expect(200);
    expect(Date.parse(res.body.previous_key_expires_at) - Date.now()).toBeGreaterThan(100_000);
    expect(await works(app.key)).toBe(200);
    await regenerate(res.body.id, '?previous_key_expires_in_seconds=60', { previous_key_expires_in_seconds: 60 }).expect(200);
    expectProblem(await regenerate(app.id, '?previous_key_expires_in_seconds=60', { previous_key_expires_in_seconds: 61 }), 400, [
      'previous_key_expires_in_seconds',
    ]);
  });

  it.each([
    ['?previous_key_expires_in_seconds=-1', undefined],
    ['?previous_key_expires_in_seconds=86401', undefined],
    ['?previous_key_expires_in_seconds=1.5', undefined],
    ['?previous_key_expires_in_seconds=0x10', undefined],
    ['?previous_key_expires_in_seconds=', undefined],
    ['', { previous_key_expires_in_seconds: 86_401 }],
    ['', { previous_key_expires_in_seconds: '60' }],
  ])('refuses %s %j with a 400, changing nothing', async (query, body) => {
    const app = await reader();
    const events = (await auditEvents(t, { entityId: app.id })).length;
    expectProblem(await regenerate(app.id, query, body), 400, ['previous_key_expires_in_seconds']);
    expect(await works(app.key)).toBe(200);
    expect((await auditEvents(t, { entityId: app.id })).length).toBe(events);
  });

  it('ends the first overlap at once when the key is regenerated again', async () => {
    const app = await reader();
    const second = (await regenerate(app.id, '?previous_key_expires_in_seconds=600').expect(200)).body.key as string;
    expect(await works(app.key)).toBe(200);
    const third = (await regenerate(app.id, '?previous_key_expires_in_seconds=600').expect(200)).body.key as string;
    expect(await works(app.key)).toBe(401);
    expect(await works(second)).toBe(200);
    expect(await works(third)).toBe(200);
    const fourth = await regenerate(app.id).expect(200);
    expect(fourth.body).not.toHaveProperty('previous_key_expires_at');
    expect(await works(second)).toBe(401);
    expect(await works(third)).toBe(401);
    expect(await works(fourth.body.key)).toBe(200);
  });

  it('refuses the previous key once its overlap is over', async () => {
    const app = await reader();
    const res = await regenerate(app.id, '?previous_key_expires_in_seconds=1').expect(200);
    expect(await works(app.key)).toBe(200);
    await sleep(Math.max(0, Date.parse(res.body.previous_key_expires_at) - Date.now()) + 50);
    expect(await works(app.key)).toBe(401);
    expect(await works(res.body.key)).toBe(200);
  });

  it('refuses both keys the moment the application is deleted', async () => {
    const app = await reader();
    const next = (await regenerate(app.id, '?previous_key_expires_in_seconds=600').expect(200)).body.key as string;
    await as(t, admin.key).delete(`/applications/${app.id}`).expect(204);
    expect(await works(app.key)).toBe(401);
    expect(await works(next)).toBe(401);
  });

  it('refuses both keys the moment an expiring application expires, and says so in the overlap it gives', async () => {
    const expiresAt = new Date(Date.now() + 2000).toISOString();
    const app = await createApplication(t, admin.key, { name: 'short', type: 'expiring', permissions: ['token:read'], expires_at: expiresAt });
    const res = await regenerate(app.id, '?previous_key_expires_in_seconds=600').expect(200);
    // The previous key cannot outlive its application.
    expect(res.body.previous_key_expires_at).toBe(expiresAt);
    const permissions = (key: string) => t.http().get('/permissions?application_type=private').set('svc-api-key', key);
    expect((await permissions(app.key)).status).toBe(200);
    expect((await permissions(res.body.key)).status).toBe(200);
    await sleep(Math.max(0, Date.parse(expiresAt) - Date.now()) + 50);
    expectProblem(await permissions(app.key), 401);
    expectProblem(await permissions(res.body.key), 401);
  });
});
