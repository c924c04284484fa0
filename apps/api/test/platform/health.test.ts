import { gatehouseVersion } from '@gatehouse/config';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';

describe('health and documents', () => {
  let t: TestApp;
  beforeAll(async () => (t = await startTestApp()));
  afterAll(() => t.close());

  it('answers liveness and readiness without a key', async () => {
    await t.http().get('/health/live').expect(200, { status: 'ok', version: gatehouseVersion() });
    const ready = await t.http().get('/health/ready').expect(200);
    expect(ready.body).toEqual({ status: 'ok', database: 'up' });
  });

  it('serves the OpenAPI document without a key', async () => {
    const res = await t.http().get('/openapi.json').expect(200);
    expect(res.body.openapi).toMatch(/^3\./);
    expect(Object.keys(res.body.paths)).toEqual(expect.arrayContaining(['/applications', '/applications/{id}']));
  });

  it('gives every response a request id and carries it in error bodies', async () => {
    const res = await t.http().get('/applications').expect(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.instance).toBe(res.headers['x-request-id']);
  });
});
