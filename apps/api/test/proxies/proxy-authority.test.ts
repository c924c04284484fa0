import type { TestApp } from '@gatehouse/test-support/test-app';
import type { Upstream } from '@gatehouse/test-support/upstream';
import { appWithUpstreamForBlock, as, createApplication, expectProblem, managementWith, newTenant } from '../support/application-fixtures';

jest.setTimeout(30_000);

/**
 * Issue 22 section 2's two leftovers. A proxy's authority was checked only when it was written, so powers given later
 * to its bound application reached the code its writer chose; and a write permission returned the whole resource, so
 * `PATCH {}` with only proxy:update read the proxy's key, code and configuration.
 */
describe("a proxy's authority and what a write returns", () => {
  const started = appWithUpstreamForBlock();
  let t: TestApp;
  let upstream: Upstream;
  beforeAll(() => ({ t, upstream } = started));

  const patch = (key: string, id: string, body: object) =>
    t.http().patch(`/proxies/${id}`).set('SVC-API-KEY', key).set('content-type', 'application/merge-patch+json').send(JSON.stringify(body));

  // The response transform reports what its svc call to mint an expiring application answered.
  const code = `module.exports = async function (req) {
    const minted = await req.svc.applications.create({ name: 'minted', type: 'expiring', permissions: ['token:read'] })
      .then((body) => ({ ok: true, type: body.type }), (e) => ({ ok: false, status: e.status, detail: e.body && e.body.detail }));
    return { status: 200, headers: { 'content-type': 'application/json' }, body: { minted } };
  };`;

  it("re-checks at every svc call that the proxy's last writer may still act as its application", async () => {
    const admin = await newTenant(t);
    // May write proxies, not create applications: it may bind a proxy to an application that cannot either.
    const writer = await managementWith(t, admin, ['proxy:create', 'proxy:read', 'proxy:update', 'proxy:invoke']);
    const backend = await createApplication(t, admin.key, { name: 'backend', type: 'private', permissions: ['token:read'] });
    const proxy = (
      await as(t, writer.key)
        .post('/proxies', { name: 'svc', destination_url: upstream.origin, require_auth: false, response_transform: { code }, application: { id: backend.id } })
        .expect(201)
    ).body;
    const invoke = async () => (await t.http().get('/proxy').set('svc-proxy-key', proxy.key).expect(200)).body.minted;
    expect(await invoke()).toMatchObject({ ok: false, status: 403 });

    // The administrator gives the bound application the power to mint keys: the writer's code must not get it.
    await as(t, admin.key)
      .put(`/applications/${backend.id}`, { name: 'backend', permissions: ['token:read'], can_create_expiring_applications: true })
      .expect(200);
    const refused = await invoke();
    expect(refused).toMatchObject({ ok: false, status: 403 });
    expect(refused.detail).toMatch(
      /svc is refused: the application that last wrote this proxy may not lend svc to an application that can do more than it can: .*can_create_expiring_applications/,
    );

    // Written again by an application that holds it all, the proxy acts with its application's powers.
    await patch(admin.key, proxy.id, { name: 'svc, vouched for' }).expect(200);
    expect(await invoke()).toEqual({ ok: true, type: 'expiring' });

    // A last writer that is gone vouches for nothing.
    const vouching = await managementWith(t, admin, ['proxy:update', 'proxy:invoke', 'application:create']);
    await patch(vouching.key, proxy.id, { name: 'svc, vouched for again' }).expect(200);
    expect(await invoke()).toEqual({ ok: true, type: 'expiring' });
    await as(t, admin.key).delete(`/applications/${vouching.id}`).expect(204);
    expect(await invoke()).toMatchObject({ ok: false, status: 403, detail: expect.stringMatching(/last wrote this proxy no longer exists/) });
  });

  it('answers a write without proxy:read with the proxy minus its key, code and configuration', async () => {
    const admin = await newTenant(t);
    const writer = await managementWith(t, admin, ['proxy:update']);
    const full = {
      name: 'p',
      destination_url: upstream.origin,
      configuration: { API_KEY: 'secret-value' },
      request_transform: { code: 'module.exports = async (req) => req.args;' },
    };
    const proxy = (await as(t, admin.key).post('/proxies', full).expect(201)).body;

    for (const res of [await patch(writer.key, proxy.id, {}), await as(t, writer.key).put(`/proxies/${proxy.id}`, { ...full, name: 'renamed' })]) {
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: proxy.id, destination_url: upstream.origin, require_auth: true });
      for (const secret of ['key', 'configuration', 'request_transform', 'response_transform']) expect(res.body).not.toHaveProperty(secret);
      expect(res.text).not.toContain(proxy.key);
      expect(res.text).not.toContain('secret-value');
    }
    expectProblem(await as(t, writer.key).get(`/proxies/${proxy.id}`), 403);
    // With proxy:read the write answers the whole proxy, as before.
    const reader = await managementWith(t, admin, ['proxy:update', 'proxy:read']);
    expect((await patch(reader.key, proxy.id, {}).expect(200)).body).toMatchObject({ key: proxy.key, configuration: { API_KEY: 'secret-value' } });
  });
});
