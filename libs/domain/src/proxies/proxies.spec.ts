import { Application } from '../applications/application';
import { generateApiKey, hashApiKey } from '../applications/api-key';
import { AuthenticateApiKey } from '../applications/authenticate-api-key';
import { ApplicationRepository } from '../applications/application.repository';
import { ApplicationType } from '../applications/permissions';
import { Principal } from '../applications/principal';
import { EscalationError, FieldErrorCollector, ValidationError } from '../shared/domain-error';
import { AuthenticationThrottle } from '../rate-limits/authentication-throttle';
import { InMemoryRateCounter } from '../rate-limits/rate-counter';
import { newId } from '../shared/ids';
import { FixedClock, InMemoryApplicationRepository, InMemoryProxyRepository, InMemoryUnitOfWork, RecordingAuditEventPublisher } from '../testing';
import { DestinationPolicy } from './destination-policy';
import { applyProxyPatch, looksLikeProxyKey, ProxyInput, TransformField, validateDestinationUrl } from './proxy';
import { CreateProxy, DeleteProxy, PatchProxy, ReplaceProxy } from './proxy-commands';
import { GetProxy, ListProxies } from './proxy-queries';
import { ResolveProxyForInvocation } from './resolve-proxy-for-invocation';
import { ProxyRepository } from './proxy.repository';
import { TransformCompiler } from './transform-compiler';

/** Refuses literal hosts it was told about; stands in for the IP-range policy of the API. */
class FakeDestinationPolicy extends DestinationPolicy {
  constructor(
    readonly allowHttp = false,
    private readonly refused = new Set(['127.0.0.1', '[::1]', '10.0.0.1']),
  ) {
    super();
  }

  allowsLiteralHost(hostname: string): boolean {
    return !this.refused.has(hostname);
  }
}

/** "Compiles" by refusing code containing SYNTAX ERROR; remembers what it was given. */
class FakeCompiler extends TransformCompiler {
  readonly compiled: string[] = [];

  validate(code: string, field: TransformField): void {
    this.compiled.push(code);
    if (code.includes('SYNTAX ERROR')) throw ValidationError.single(`${field}.code`, 'does not compile: SyntaxError (line 1, column 1)');
  }
}

const CODE = 'module.exports = async (req) => req.args;';

function setup(policy: DestinationPolicy = new FakeDestinationPolicy()) {
  const clock = new FixedClock('2026-11-21T10:00:00.000Z');
  const applications = new InMemoryApplicationRepository();
  const proxies = new InMemoryProxyRepository();
  const publisher = new RecordingAuditEventPublisher();
  const uow = new InMemoryUnitOfWork(clock, publisher).register(ApplicationRepository, applications).register(ProxyRepository, proxies);
  const compiler = new FakeCompiler();
  return {
    clock,
    applications,
    proxies,
    uow,
    compiler,
    create: new CreateProxy(uow, clock, compiler, policy),
    replace: new ReplaceProxy(uow, clock, compiler, policy),
    patch: new PatchProxy(uow, clock, compiler, policy),
    remove: new DeleteProxy(uow),
    get: new GetProxy(proxies),
    list: new ListProxies(proxies),
    resolve: new ResolveProxyForInvocation(proxies, new AuthenticateApiKey(applications, clock)),
  };
}

function principal(tenantId = newId(), permissions: string[] = ['proxy:create', 'proxy:read', 'proxy:update', 'proxy:delete', 'proxy:invoke']): Principal {
  return { applicationId: newId(), tenantId, type: 'management', permissions: new Set(permissions), canCreateExpiringApplications: false };
}

async function anApplication(
  repo: InMemoryApplicationRepository,
  tenantId: string,
  type: ApplicationType,
  permissions: string[] = [],
  canCreateExpiringApplications: boolean | null = null,
) {
  const key = generateApiKey();
  const app: Application = {
    id: newId(),
    tenantId,
    name: type,
    type,
    permissions,
    rules: [],
    keyHash: hashApiKey(key),
    createdBy: null,
    createdAt: new Date('2026-11-21T09:00:00.000Z'),
    modifiedBy: null,
    modifiedAt: null,
    expiresAt: null,
    canCreateExpiringApplications,
    rateLimit: null,
    previousKeyHash: null,
    previousKeyExpiresAt: null,
    lastUsedAt: null,
  };
  await repo.insert(app);
  return { app, key };
}

const input = (over: Partial<ProxyInput> = {}): ProxyInput => ({ name: 'payments', destinationUrl: 'https://api.example.com/v1', ...over });

async function validationErrors(promise: Promise<unknown>): Promise<Record<string, string[]>> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).fieldErrors ?? {};
}

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

describe('opening a proxy to callers without a key (require_auth false) hands out proxy:invoke at the proxy\'s rate', () => {
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
    await expect(s.create.execute(limited, input({ requireAuth: false }))).rejects.toThrow(/no rate limit, looser than this application's own \(10 requests per 60 s\)/);
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
    await expectEscalation(s, s.replace.execute(weak, proxy.id, input({ applicationId: minter.id, requestTransform: code })), 'can_create_expiring_applications');
    // Unbinding leaves the proxy nothing of the application's: proxy:update is enough for that.
    await expect(s.patch.execute(weak, proxy.id, { applicationId: null })).resolves.toMatchObject({ applicationId: null });
  });

  it('reports validation errors before authority', async () => {
    const { s, weak, minter } = await bound();
    await validationErrors(s.create.execute(weak, input({ name: '', applicationId: minter.id })));
  });
});

describe('destination_url', () => {
  const check = (url: unknown, policy = new FakeDestinationPolicy()) => {
    const errors = new FieldErrorCollector();
    validateDestinationUrl(url, policy, errors);
    return errors.isEmpty;
  };

  const exactly400 = `https://api.example.com/${'a'.repeat(400 - 'https://api.example.com/'.length)}`;

  it.each([
    ['https://api.example.com'],
    ['https://api.example.com:8443/v1/'],
    ['HTTPS://API.EXAMPLE.COM/v1'],
    ['a URL of exactly 400 characters', exactly400],
  ])('accepts %s', (label, url = label) => expect(check(url)).toBe(true));

  it.each([
    undefined,
    '',
    'api.example.com',
    '/relative',
    'https:api.example.com',
    'https:/api.example.com',
    'http://api.example.com',
    'ftp://api.example.com',
    'javascript:alert(1)',
    'https://user:pw@api.example.com',
    'https://api.example.com/?q=1',
    'https://api.example.com/#frag',
    ' https://api.example.com',
    'https://api.example.com/a b',
    'https://127.0.0.1/',
    'https://[::1]/',
  ])('refuses %s', (url) => expect(check(url)).toBe(false));

  it('refuses a URL of 401 characters', () => expect(check(`${exactly400}a`)).toBe(false));

  it('accepts http:// only where the operator allows it', () => {
    expect(check('http://api.example.com', new FakeDestinationPolicy(true))).toBe(true);
  });
});

describe('ReplaceProxy', () => {
  it('returns omitted optional fields to their defaults and keeps the key; recompiles only changed code', async () => {
    const s = setup();
    const caller = principal();
    const priv = await anApplication(s.applications, caller.tenantId, 'private');
    const created = await s.create.execute(
      caller,
      input({ requestTransform: { code: CODE }, applicationId: priv.app.id, configuration: { A: 'b' }, requireAuth: false }),
    );
    s.clock.advance(1000);
    const compiledBefore = s.compiler.compiled.length;
    const same = await s.replace.execute(caller, created.id, input({ requestTransform: { code: CODE } }));
    expect(s.compiler.compiled.length).toBe(compiledBefore);
    expect(same).toMatchObject({ key: created.key, requestTransform: { code: CODE }, applicationId: null, configuration: null, requireAuth: true });
    const replaced = await s.replace.execute(caller, created.id, input({ name: 'renamed' }));
    expect(replaced).toEqual({
      ...created,
      name: 'renamed',
      requestTransform: null,
      applicationId: null,
      configuration: null,
      requireAuth: true,
      modifiedAt: s.clock.now(),
    });
    expect(s.uow.events.map((e) => e.operation)).toEqual(['create', 'update', 'update']);
  });

  it("is a NotFoundError for another tenant's proxy", async () => {
    const s = setup();
    const created = await s.create.execute(principal(), input());
    await expect(s.replace.execute(principal(), created.id, input())).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('PatchProxy and the merge patch', () => {
  it('applies RFC 7396 member by member', () => {
    const current: ProxyInput = {
      name: 'p',
      destinationUrl: 'https://a.example.com',
      requestTransform: { code: CODE },
      responseTransform: null,
      applicationId: 'app',
      configuration: { KEEP: '1', DROP: '2' },
      requireAuth: false,
    };
    expect(applyProxyPatch(current, {})).toEqual(current);
    expect(
      applyProxyPatch(current, {
        name: 'q',
        requestTransform: {},
        responseTransform: { code: 'new' },
        configuration: { DROP: null, ADD: '3' },
        requireAuth: null,
      }),
    ).toEqual({ ...current, name: 'q', responseTransform: { code: 'new' }, configuration: { KEEP: '1', ADD: '3' }, requireAuth: null });
    expect(applyProxyPatch(current, { requestTransform: { code: null }, applicationId: null, configuration: null })).toEqual({
      ...current,
      requestTransform: null,
      applicationId: null,
      configuration: null,
    });
  });

  it('keeps a configuration member named __proto__ as plain data, in a null-prototype map', () => {
    const patch = JSON.parse('{"__proto__": "x", "B": "y"}') as Record<string, string>;
    const merged = applyProxyPatch({ name: 'p', destinationUrl: 'https://a.example.com', configuration: null }, { configuration: patch });
    // Null prototype: an absent key such as toString reads as undefined, never as an Object.prototype member.
    expect(Object.getPrototypeOf(merged.configuration)).toBeNull();
    expect(merged.configuration!.toString).toBeUndefined();
    expect(Object.entries(merged.configuration!)).toEqual([
      ['__proto__', 'x'],
      ['B', 'y'],
    ]);
  });

  it('validates the merged result like a PUT body and changes nothing when it fails', async () => {
    const s = setup();
    const caller = principal();
    const created = await s.create.execute(caller, input({ configuration: { A: 'b' } }));
    expect(Object.keys(await validationErrors(s.patch.execute(caller, created.id, { name: null })))).toEqual(['name']);
    expect(Object.keys(await validationErrors(s.patch.execute(caller, created.id, { responseTransform: { code: 'SYNTAX ERROR' } })))).toEqual([
      'response_transform.code',
    ]);
    expect(s.proxies.all()).toEqual([created]);
    const patched = await s.patch.execute(caller, created.id, { requireAuth: false, configuration: { C: 'd' } });
    expect(patched).toMatchObject({ requireAuth: false, configuration: { A: 'b', C: 'd' }, key: created.key });
    expect(s.uow.events.map((e) => e.operation)).toEqual(['create', 'update']);
  });
});

describe('DeleteProxy, GetProxy, ListProxies', () => {
  it('scope everything to the caller tenant', async () => {
    const s = setup();
    const mine = principal();
    const theirs = principal();
    const proxy = await s.create.execute(mine, input());
    await expect(s.get.execute(theirs, proxy.id)).rejects.toMatchObject({ code: 'not_found' });
    expect((await s.list.execute(theirs, {}, { page: 1, size: 20 })).items).toEqual([]);
    await expect(s.remove.execute(theirs, proxy.id)).rejects.toMatchObject({ code: 'not_found' });
    expect(await s.get.execute(mine, proxy.id)).toEqual(proxy);
    await s.remove.execute(mine, proxy.id);
    await expect(s.get.execute(mine, proxy.id)).rejects.toMatchObject({ code: 'not_found' });
    expect(s.uow.events.map((e) => [e.operation, e.message])).toEqual([
      ['create', "Proxy 'payments' created"],
      ['delete', "Proxy 'payments' deleted"],
    ]);
  });
});

describe('ResolveProxyForInvocation', () => {
  it('404 for a missing, malformed or unknown key', async () => {
    const s = setup();
    for (const key of [undefined, '', 'short', 'A'.repeat(32), "'; DROP TABLE proxies; --"]) {
      await expect(s.resolve.execute(key, undefined)).rejects.toMatchObject({ code: 'not_found' });
    }
  });

  it('admits anyone with the key when require_auth is false', async () => {
    const s = setup();
    const proxy = await s.create.execute(principal(), input({ requireAuth: false }));
    expect((await s.resolve.execute(proxy.key, undefined)).proxy).toEqual(proxy);
  });

  it('with require_auth: 401 without a valid key, 403 from another tenant or without proxy:invoke', async () => {
    const s = setup();
    const caller = principal();
    const proxy = await s.create.execute(caller, input());
    const invoker = await anApplication(s.applications, caller.tenantId, 'private', ['proxy:invoke']);
    const reader = await anApplication(s.applications, caller.tenantId, 'private', ['token:read']);
    const foreign = await anApplication(s.applications, newId(), 'private', ['proxy:invoke']);
    await expect(s.resolve.execute(proxy.key, undefined)).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(s.resolve.execute(proxy.key, generateApiKey())).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(s.resolve.execute(proxy.key, reader.key)).rejects.toMatchObject({ code: 'forbidden' });
    await expect(s.resolve.execute(proxy.key, foreign.key)).rejects.toMatchObject({ code: 'forbidden' });
    expect((await s.resolve.execute(proxy.key, invoker.key)).proxy).toEqual(proxy);
  });

  it('throttles guessed proxy keys and API keys of one address together, then refuses it without lookups', async () => {
    const s = setup();
    const throttle = new AuthenticationThrottle(new InMemoryRateCounter(s.clock), { limit: 2, windowSeconds: 60 }, s.clock);
    const resolve = new ResolveProxyForInvocation(s.proxies, new AuthenticateApiKey(s.applications, s.clock, throttle), throttle);
    const proxy = await s.create.execute(principal(), input());
    const open = await s.create.execute(principal(), input({ requireAuth: false }));
    const lookups = jest.spyOn(s.proxies, 'findByKey');
    await expect(resolve.execute('A'.repeat(32), undefined, '203.0.113.7')).rejects.toMatchObject({ code: 'not_found' });
    await expect(resolve.execute(proxy.key, generateApiKey(), '203.0.113.7')).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(resolve.execute('B'.repeat(32), undefined, '203.0.113.7')).rejects.toMatchObject({ code: 'rate_limited' });
    const before = lookups.mock.calls.length;
    await expect(resolve.execute(open.key, undefined, '203.0.113.7')).rejects.toMatchObject({ code: 'rate_limited' });
    expect(lookups.mock.calls.length).toBe(before);
    expect((await resolve.execute(open.key, undefined, '198.51.100.1')).proxy).toEqual(open);
  });

  it('keeps serving, from a blocked address, a proxy key and an API key accepted from it before', async () => {
    const s = setup();
    const throttle = new AuthenticationThrottle(new InMemoryRateCounter(s.clock), { limit: 2, windowSeconds: 60 }, s.clock);
    const resolve = new ResolveProxyForInvocation(s.proxies, new AuthenticateApiKey(s.applications, s.clock, throttle), throttle);
    const caller = principal();
    const invoker = await anApplication(s.applications, caller.tenantId, 'private', ['proxy:invoke']);
    const guarded = await s.create.execute(caller, input());
    const open = await s.create.execute(caller, input({ requireAuth: false }));
    await resolve.execute(guarded.key, invoker.key, '203.0.113.7');
    await resolve.execute(open.key, undefined, '203.0.113.7');
    for (let i = 0; i < 3; i++) await resolve.execute('A'.repeat(32), undefined, '203.0.113.7').catch(() => undefined);
    await expect(resolve.execute('A'.repeat(32), undefined, '203.0.113.7')).rejects.toMatchObject({ code: 'rate_limited' });
    expect((await resolve.execute(guarded.key, invoker.key, '203.0.113.7')).proxy).toEqual(guarded);
    expect((await resolve.execute(open.key, undefined, '203.0.113.7')).proxy).toEqual(open);
    // A proxy key first presented from there now is refused unseen, like any guess.
    const other = await s.create.execute(caller, input({ requireAuth: false }));
    await expect(resolve.execute(other.key, undefined, '203.0.113.7')).rejects.toMatchObject({ code: 'rate_limited' });
  });
});
