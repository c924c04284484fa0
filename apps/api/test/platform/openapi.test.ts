import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildOpenApiDocument } from '../../src/openapi';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';

/** The OpenAPI document is generated from the code and committed; it must not drift from it. */
describe('OpenAPI document', () => {
  let t: TestApp;
  beforeAll(async () => (t = await startTestApp()));
  afterAll(() => t.close());

  it('matches the committed apps/api/openapi.json (regenerate with `npm run openapi`)', () => {
    const committed = JSON.parse(readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8'));
    expect(JSON.parse(JSON.stringify(buildOpenApiDocument(t.app)))).toEqual(committed);
  });

  it('carries the release as info.version and the licence', () => {
    const { version } = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', '..', 'package.json'), 'utf8')) as { version: string };
    expect(buildOpenApiDocument(t.app).info).toMatchObject({ version, license: { name: 'Apache-2.0' } });
  });

  it.each(['/docs', '/docs/', '/docs/swagger-ui-init.js', '/openapi.json', '/openapi.yaml'])('%s cannot be framed and is not sniffed', async (path) => {
    const res = await t.http().get(path);
    expect(res.status).toBeLessThan(400);
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('is the document served at /openapi.json', async () => {
    const served = await t.http().get('/openapi.json').expect(200);
    expect(served.body).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument(t.app))));
  });
});
