import { Principal } from '../applications/principal';
import { EscalationError } from '../shared/domain-error';
import { newId } from '../shared/ids';
import { looksLikeProxyKey } from './proxy';
import { anApplication, input, principal, setup, validationErrors } from '../testing/proxy-spec-fixtures';

describe('CreateProxy', () => {
  it('creates with defaults, a generated key, and records the event', async () => {
    const s = setup();
    const caller = principal();
    const proxy = await s.create.execute(caller, input());
    expect(proxy).toEqual({
      id: expect.any(String),
      tenantId: caller.tenantId,
      name: 'payments',
      key: expect.stringMatching(/^[0-9A-Za-z]{32}$/),
      destinationUrl: 'https://api.example.com/v1',
      requestTransform: null,
      responseTransform: null,
      configuration: null,
      applicationId: null,
      requireAuth: true,
      rateLimit: null,
      createdBy: caller.applicationId,
      createdAt: s.clock.now(),
      modifiedBy: caller.applicationId,
      modifiedAt: s.clock.now(),
    });
    expect(looksLikeProxyKey(proxy.key)).toBe(true);
    expect(s.proxies.all()).toEqual([proxy]);
    expect(s.uow.events).toEqual([
      expect.objectContaining({ entityType: 'proxy', entityId: proxy.id, operation: 'create', actorId: caller.applicationId, actorType: 'application' }),
    ]);
  });

  it('compiles each transform, and reports every problem at once with field paths', async () => {
    const s = setup();
    const errors = await validationErrors(
      s.create.execute(
        principal(),
        input({
          name: '',
          destinationUrl: 'http://api.example.com',
          requestTransform: { code: 'SYNTAX ERROR' },
          responseTransform: { code: 'x'.repeat(50_001) },
          configuration: { A: 1 as unknown as string },
        }),
      ),
    );
    expect(Object.keys(errors).sort()).toEqual(['configuration.A', 'destination_url', 'name', 'request_transform.code', 'response_transform.code']);
    expect(s.proxies.all()).toEqual([]);
    expect(s.uow.events).toEqual([]);
  });

  it('takes a public or private application of the same tenant, nothing else', async () => {
    const s = setup();
    const caller = principal();
    const pub = await anApplication(s.applications, caller.tenantId, 'public');
    const priv = await anApplication(s.applications, caller.tenantId, 'private');
    const management = await anApplication(s.applications, caller.tenantId, 'management');
    const expiring = await anApplication(s.applications, caller.tenantId, 'expiring');
    const foreign = await anApplication(s.applications, newId(), 'private');
    expect((await s.create.execute(caller, input({ applicationId: pub.app.id }))).applicationId).toBe(pub.app.id);
    expect((await s.create.execute(caller, input({ applicationId: priv.app.id.toUpperCase() }))).applicationId).toBe(priv.app.id);
    for (const id of [management.app.id, expiring.app.id, foreign.app.id, newId(), 'not-a-uuid']) {
      const errors = await validationErrors(s.create.execute(caller, input({ applicationId: id })));
      expect(Object.keys(errors)).toEqual(['application.id']);
    }
  });
});

describe("opening a proxy to callers without a key (require_auth false) hands out proxy:invoke at the proxy's rate", () => {
  const writer = (permissions: string[], rateLimit: { limit: number; windowSeconds: number } | null = null): Principal => ({
    ...principal(newId(), permissions),
    rateLimit,
  });

  it('needs proxy:invoke to open a proxy by create, replace or patch, and not to leave an open proxy as open', async () => {
    const s = setup();
    const weak = writer(['proxy:create', 'proxy:update']);
    const strong = { ...writer(['proxy:create', 'proxy:update', 'proxy:invoke']), tenantId: weak.tenantId };
    await expect(s.create.execute(weak, input({ requireAuth: false }))).rejects.toThrow(/lacks proxy:invoke/);
    const closed = await s.create.execute(weak, input());
    await expect(s.replace.execute(weak, closed.id, input({ requireAuth: false }))).rejects.toBeInstanceOf(EscalationError);
    await expect(s.patch.execute(weak, closed.id, { requireAuth: false })).rejects.toBeInstanceOf(EscalationError);
    expect(s.proxies.all().map((p) => p.requireAuth)).toEqual([true]);
    const open = await s.create.execute(strong, input({ requireAuth: false }));
    await expect(s.patch.execute(weak, open.id, { name: 'renamed' })).resolves.toMatchObject({ requireAuth: false, name: 'renamed' });
    await expect(s.patch.execute(weak, open.id, { requireAuth: true })).resolves.toMatchObject({ requireAuth: true });
  });

  it("needs the proxy's rate limit within the writer's own to open it or loosen an open one", async () => {
    const s = setup();
    const limited = writer(['proxy:create', 'proxy:update', 'proxy:invoke'], { limit: 10, windowSeconds: 60 });
    await expect(s.create.execute(limited, input({ requireAuth: false }))).rejects.toThrow(
      /no rate limit, looser than this application's own \(10 requests per 60 s\)/,
    );
    await expect(s.create.execute(limited, input({ requireAuth: false, rateLimit: { limit: 10, windowSeconds: 30 } }))).rejects.toBeInstanceOf(EscalationError);
    const open = await s.create.execute(limited, input({ requireAuth: false, rateLimit: { limit: 5, windowSeconds: 60 } }));
    await expect(s.patch.execute(limited, open.id, { rateLimit: null })).rejects.toBeInstanceOf(EscalationError);
    await expect(s.patch.execute(limited, open.id, { rateLimit: { limit: 2 } })).resolves.toMatchObject({ rateLimit: { limit: 2, windowSeconds: 60 } });
  });
});

describe("a proxy's application: its transforms wield it through svc, so writing the proxy needs authority over it", () => {
  async function bound() {
    const s = setup();
    const weak = principal(newId(), ['proxy:create', 'proxy:read', 'proxy:update', 'proxy:delete']);
    const minter = await anApplication(s.applications, weak.tenantId, 'private', ['token:read'], true);
    const invoker = await anApplication(s.applications, weak.tenantId, 'private', ['token:read', 'proxy:invoke']);
    const plain = await anApplication(s.applications, weak.tenantId, 'private', ['token:read', 'token:use']);
    const strong = principal(weak.tenantId, ['proxy:create', 'proxy:update', 'proxy:invoke', 'application:create']);
    return { s, weak, strong, minter: minter.app, invoker: invoker.app, plain: plain.app };
  }

  async function expectEscalation(s: ReturnType<typeof setup>, attempt: Promise<unknown>, power: string) {
    const before = { proxies: s.proxies.all(), events: s.uow.events.length };
    const error = await attempt.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EscalationError);
    expect((error as Error).message).toMatch(new RegExp(`may not bind a proxy to .*${power}`));
    expect(s.proxies.all()).toEqual(before.proxies);
    expect(s.uow.events).toHaveLength(before.events);
  }

  it('refuses creating a proxy bound to an application that can do more than the caller', async () => {
    const { s, weak, strong, minter, invoker } = await bound();
    await expectEscalation(s, s.create.execute(weak, input({ applicationId: minter.id })), 'can_create_expiring_applications');
    await expectEscalation(s, s.create.execute(weak, input({ applicationId: invoker.id })), 'proxy:invoke');
    await expect(s.create.execute(strong, input({ applicationId: minter.id }))).resolves.toMatchObject({ applicationId: minter.id });
    await expect(s.create.execute(strong, input({ applicationId: invoker.id }))).resolves.toMatchObject({ applicationId: invoker.id });
  });

  it('allows binding an application whose only powers are token permissions (a management key never holds those)', async () => {
    const { s, weak, plain } = await bound();
    await expect(s.create.execute(weak, input({ applicationId: plain.id }))).resolves.toMatchObject({ applicationId: plain.id });
  });

  it('refuses rebinding by PUT or PATCH', async () => {
    const { s, weak, minter, plain } = await bound();
    const proxy = await s.create.execute(weak, input({ applicationId: plain.id }));
    await expectEscalation(s, s.replace.execute(weak, proxy.id, input({ applicationId: minter.id })), 'can_create_expiring_applications');
    await expectEscalation(s, s.patch.execute(weak, proxy.id, { applicationId: minter.id }), 'can_create_expiring_applications');
  });

  it('refuses any change to a proxy already bound to a stronger application: new code would wield it', async () => {
    const { s, weak, strong, minter } = await bound();
    const proxy = await s.create.execute(strong, input({ applicationId: minter.id }));
    const code = { code: "module.exports = async (req) => req.svc.applications.create({ name: 'x', type: 'expiring', permissions: ['token:read'] });" };
    await expectEscalation(s, s.patch.execute(weak, proxy.id, { requestTransform: code }), 'can_create_expiring_applications');
    await expectEscalation(s, s.patch.execute(weak, proxy.id, { name: 'renamed' }), 'can_create_expiring_applications');
    await expectEscalation(
      s,
      s.replace.execute(weak, proxy.id, input({ applicationId: minter.id, requestTransform: code })),
      'can_create_expiring_applications',
    );
    // Unbinding leaves the proxy nothing of the application's: proxy:update is enough for that.
    await expect(s.patch.execute(weak, proxy.id, { applicationId: null })).resolves.toMatchObject({ applicationId: null });
  });

  it('reports validation errors before authority', async () => {
    const { s, weak, minter } = await bound();
    await validationErrors(s.create.execute(weak, input({ name: '', applicationId: minter.id })));
  });
});
