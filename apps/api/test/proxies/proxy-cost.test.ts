import type { Response } from 'supertest';
import { MAX_CONFIGURATION_BYTES, MAX_TENANT_CONFIGURATION_BYTES } from '@gatehouse/domain';
import type { TestApp } from '@gatehouse/test-support/test-app';
import { MAX_PAGE_BYTES } from '../../src/proxies/page-bytes';
import { appWithTenant, as, Caller, expectProblem, newTenant, rowCounts } from '../support/application-fixtures';

jest.setTimeout(60_000);

/** `entries` values of `length` characters (each entry within the per-entry rules: 100 of 10,000 characters). */
const configuration = (entries: number, length: number) => Object.fromEntries(Array.from({ length: entries }, (_, i) => [`k${i}`, 'v'.repeat(length)]));

/**
 * Issue 22 section 3: 100 proxies with about 1 MB of configuration each (within the per-entry maxima) made
 * `GET /proxies?size=100` build a 100 MB body, and eight at once stalled every tenant for seconds. What one
 * configuration, one tenant and one list page may cost is bounded now.
 */
describe('what a proxy, a tenant and a list page may cost', () => {
  let t: TestApp;
  let admin: Caller;
  beforeAll(async () => ({ t, admin } = await appWithTenant()), 60_000);
  afterAll(() => t?.close());

  const create = (key: string, body: object) => as(t, key).post('/proxies', { name: 'p', destination_url: 'https://api.example.com', ...body });

  it('refuses a configuration over 64 KiB with a 400 naming it, storing nothing', async () => {
    const before = await rowCounts(t, admin.tenantId);
    const res = await create(admin.key, { configuration: configuration(100, 10_000) });
    expectProblem(res, 400, ['configuration']);
    expect(res.body.errors.configuration[0]).toMatch(`at most ${MAX_CONFIGURATION_BYTES} bytes`);
    expect(await rowCounts(t, admin.tenantId)).toEqual(before);
    const made = await create(admin.key, { configuration: configuration(6, 10_000) }).expect(201);
    const patched = await t
      .http()
      .patch(`/proxies/${made.body.id}`)
      .set('SVC-API-KEY', admin.key)
      .set('content-type', 'application/merge-patch+json')
      .send(JSON.stringify({ configuration: configuration(10, 10_000) }));
    expectProblem(patched, 400, ['configuration']);
  });

  it("refuses the proxy that would take its tenant's configurations past 4 MiB", async () => {
    const tenant = await newTenant(t);
    const near = configuration(6, 10_000);
    const each = Buffer.byteLength(JSON.stringify(near));
    const fits = Math.floor(MAX_TENANT_CONFIGURATION_BYTES / (each + 16));
    for (let i = 0; i < fits; i++) {
      const res = await create(tenant.key, { configuration: near });
      if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    }
    const before = await rowCounts(t, tenant.tenantId);
    const refused = await create(tenant.key, { configuration: near });
    expectProblem(refused, 400, ['configuration']);
    expect(refused.body.errors.configuration[0]).toMatch(/this tenant's proxies past 4194304 bytes/);
    expect(await rowCounts(t, tenant.tenantId)).toEqual(before);
    // Another tenant is not affected.
    await create(admin.key, { configuration: near }).expect(201);
  });

  it('cuts a list page at 4 MiB, whatever `size` says, and `next` continues after it: nothing skipped, nothing twice', async () => {
    const tenant = await newTenant(t);
    // A comment of control characters: 50,000 characters a transform may hold, 6 bytes each in JSON.
    const code = `module.exports = async (req) => req.args; //${'\u0001'.repeat(49_000)}`;
    const ids = new Set<string>();
    for (let i = 0; i < 9; i++) {
      const res = await create(tenant.key, { request_transform: { code }, response_transform: { code } }).expect(201);
      ids.add(res.body.id);
    }
    for (const query of ['size=100', 'size=100&page=1']) {
      const seen: string[] = [];
      let url: string | undefined = `/proxies?${query}`;
      let pages = 0;
      while (url) {
        const res: Response = await as(t, tenant.key).get(url).expect(200);
        pages++;
        expect(res.text.length).toBeLessThanOrEqual(MAX_PAGE_BYTES + 700_000);
        seen.push(...res.body.data.map((p: { id: string }) => p.id));
        url = res.body.pagination.next ? `/proxies?size=100&start=${res.body.pagination.next}` : undefined;
      }
      expect(pages).toBeGreaterThan(1);
      expect(seen.sort()).toEqual([...ids].sort());
    }
  });
});
