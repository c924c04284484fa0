import { inMemoryPorts } from '../testing/in-memory-ports';
import { EscalationError, NotFoundError } from '../shared/domain-error';
import { CreateTenant } from '../tenants/tenant-commands';
import { hashApiKey } from './api-key';
import { CreateApplication, DeleteApplication, RegenerateApplicationKey, UpdateApplication } from './application-commands';
import { AuthenticateApiKey } from './authenticate-api-key';
import { powersBeyond } from './authority';
import { MANAGEMENT_PERMISSIONS } from './permissions';
import { principalOf } from './principal';

const CONDITION_RULE = { priority: 1, conditions: [{ attribute: 'id' as const, operator: 'equals' as const, value: 'tok_1' }], transform: 'reveal' as const };

async function setup() {
  const ports = inMemoryPorts();
  const { application: root, key: rootKey } = await new CreateTenant(ports.uow, ports.clock).execute('acme');
  const create = new CreateApplication(ports.uow, ports.clock, ports.expiry);
  const admin = principalOf(root);
  /** A management application holding exactly `permissions`, as a caller. */
  const managementWith = async (...permissions: string[]) =>
    principalOf((await create.execute(admin, { name: `holds ${permissions.join(' ')}`, type: 'management', permissions })).application);
  return {
    ports,
    root,
    rootKey,
    admin,
    create,
    managementWith,
    update: new UpdateApplication(ports.uow, ports.clock),
    regenerate: new RegenerateApplicationKey(ports.uow, ports.clock),
    remove: new DeleteApplication(ports.uow),
    authenticate: new AuthenticateApiKey(ports.applications, ports.clock),
  };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** The three verbs that act on an existing application, each as `caller` on `id`. */
function verbs(s: Setup) {
  return [
    ['PUT', (caller: ReturnType<typeof principalOf>, id: string, permissions: string[]) => s.update.execute(caller, id, { name: 'same', permissions })],
    ['regenerate', (caller: ReturnType<typeof principalOf>, id: string) => s.regenerate.execute(caller, id)],
    ['delete', (caller: ReturnType<typeof principalOf>, id: string) => s.remove.execute(caller, id)],
  ] as const;
}

/** Refused with an EscalationError naming `powers`, and nothing stored or recorded changed. */
async function expectRefused(s: Setup, attempt: Promise<unknown>, powers: string[]) {
  const before = { apps: s.ports.applications.all(), events: s.ports.uow.events.length };
  const error = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EscalationError);
  expect((error as EscalationError).code).toBe('forbidden');
  for (const power of powers) expect((error as Error).message).toContain(power);
  expect(s.ports.applications.all()).toEqual(before.apps);
  expect(s.ports.uow.events).toHaveLength(before.events);
}

describe('granting: a create or an update grants only what the caller holds', () => {
  it('refuses a management key minting a key with a management permission it lacks', async () => {
    const s = await setup();
    const limited = await s.managementWith('application:create', 'application:update');
    await expectRefused(s, s.create.execute(limited, { name: 'escalated', type: 'management', permissions: ['log:read'] }), ['log:read']);
  });

  it('refuses raising an application above the caller through an update', async () => {
    const s = await setup();
    const limited = await s.managementWith('application:create', 'application:update');
    const target = await s.create.execute(limited, { name: 'target', type: 'management', permissions: ['application:create'] });
    await expectRefused(s, s.update.execute(limited, target.application.id, { name: 'target', permissions: ['application:create', 'proxy:delete'] }), [
      'proxy:delete',
    ]);
  });

  it('refuses granting can_create_expiring_applications without application:create (create or update)', async () => {
    const s = await setup();
    const updater = await s.managementWith('application:update');
    const { application } = await s.create.execute(s.admin, { name: 'backend', type: 'private', permissions: ['token:read'] });
    await expectRefused(s, s.update.execute(updater, application.id, { name: 'backend', permissions: ['token:read'], canCreateExpiringApplications: true }), [
      'can_create_expiring_applications',
    ]);
    const both = await s.managementWith('application:create', 'application:update');
    await expect(
      s.update.execute(both, application.id, { name: 'backend', permissions: ['token:read'], canCreateExpiringApplications: true }),
    ).resolves.toMatchObject({ canCreateExpiringApplications: true });
  });

  it('counts the permissions of rules as much as the permissions list', async () => {
    const s = await setup();
    const minter = await s.create.execute(s.admin, { name: 'minter', type: 'private', permissions: ['token:search'], canCreateExpiringApplications: true });
    await expectRefused(
      s,
      s.create.execute(principalOf(minter.application), { name: 'escalated', type: 'expiring', rules: [{ ...CONDITION_RULE, permissions: ['token:read'] }] }),
      ['token:read'],
    );
  });

  it('still lets a management key provision token permissions its own type cannot hold', async () => {
    const s = await setup();
    const limited = await s.managementWith('application:create');
    const { application } = await s.create.execute(limited, { name: 'backend', type: 'private', permissions: ['token:read', 'token:use'] });
    expect(application.permissions).toEqual(['token:read', 'token:use']);
  });

  it('lets a private key with can_create_expiring_applications grant only the token permissions it holds', async () => {
    const s = await setup();
    const minter = await s.create.execute(s.admin, { name: 'minter', type: 'private', permissions: ['token:read'], canCreateExpiringApplications: true });
    const principal = principalOf(minter.application);
    await expect(
      s.create.execute(principal, { name: 'ok', type: 'expiring', rules: [{ ...CONDITION_RULE, permissions: ['token:read'] }] }),
    ).resolves.toBeDefined();
    const other = await s.create.execute(s.admin, { name: 'no-read', type: 'private', permissions: ['token:search'], canCreateExpiringApplications: true });
    await expectRefused(s, s.create.execute(principalOf(other.application), { name: 'escalated', type: 'expiring', permissions: ['token:read'] }), [
      'token:read',
    ]);
  });
});

describe('acting on another application: only on one whose powers the caller holds', () => {
  it('refuses a key holding only application:update a new key for the root application, and leaves the old key working', async () => {
    const s = await setup();
    const updater = await s.managementWith('application:update');
    await expectRefused(s, s.regenerate.execute(updater, s.root.id), ['application:create', 'log:read']);
    expect((await s.authenticate.execute(s.rootKey)).application.id).toBe(s.root.id);
  });

  it.each(['PUT', 'regenerate', 'delete'] as const)('refuses %s on an application holding a management permission the caller lacks', async (verb) => {
    const s = await setup();
    const caller = await s.managementWith('application:update', 'application:delete', 'proxy:read');
    const stronger = await s.create.execute(s.admin, { name: 'stronger', type: 'management', permissions: ['proxy:read', 'log:read'] });
    const act = verbs(s).find(([name]) => name === verb)![1];
    await expectRefused(s, act(caller, stronger.application.id, ['proxy:read']), ['log:read']);
  });

  it('refuses stripping a stronger application down to a subset of the caller (the PUT of the issue)', async () => {
    const s = await setup();
    const updater = await s.managementWith('application:update', 'application:read');
    await expectRefused(s, s.update.execute(updater, s.root.id, { name: 'root', permissions: ['application:read'] }), ['log:read']);
    expect(s.ports.applications.all().find((a) => a.id === s.root.id)!.permissions).toEqual([...MANAGEMENT_PERMISSIONS]);
  });

  it.each(['PUT', 'regenerate', 'delete'] as const)(
    '%s of a private application with can_create_expiring_applications needs application:create',
    async (verb) => {
      const s = await setup();
      const minter = await s.create.execute(s.admin, { name: 'minter', type: 'private', permissions: ['token:read'], canCreateExpiringApplications: true });
      const act = verbs(s).find(([name]) => name === verb)![1];
      const without = await s.managementWith('application:update', 'application:delete');
      await expectRefused(s, act(without, minter.application.id, ['token:read']), ['can_create_expiring_applications (which needs application:create)']);
      const withCreate = await s.managementWith('application:update', 'application:delete', 'application:create');
      await expect(act(withCreate, minter.application.id, ['token:read'])).resolves.not.toThrow();
    },
  );

  it.each(['PUT', 'regenerate', 'delete'] as const)('%s counts proxy:invoke, which a management key may hold, and the rules', async (verb) => {
    const s = await setup();
    const invoker = await s.create.execute(s.admin, {
      name: 'invoker',
      type: 'private',
      permissions: ['token:read'],
      rules: [{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['proxy:invoke'] }],
    });
    const act = verbs(s).find(([name]) => name === verb)![1];
    await expectRefused(s, act(await s.managementWith('application:update', 'application:delete'), invoker.application.id, ['token:read']), ['proxy:invoke']);
    await expect(
      act(await s.managementWith('application:update', 'application:delete', 'proxy:invoke'), invoker.application.id, ['token:read']),
    ).resolves.not.toThrow();
  });

  it.each(['PUT', 'regenerate', 'delete'] as const)('allows %s on an application the caller covers, token permissions included', async (verb) => {
    const s = await setup();
    const caller = await s.managementWith('application:update', 'application:delete', 'proxy:read');
    const weaker = await s.create.execute(s.admin, { name: 'weaker', type: 'management', permissions: ['proxy:read'] });
    const backend = await s.create.execute(s.admin, { name: 'backend', type: 'private', permissions: ['token:read', 'token:use'] });
    const act = verbs(s).find(([name]) => name === verb)![1];
    await expect(act(caller, weaker.application.id, ['proxy:read'])).resolves.not.toThrow();
    await expect(act(caller, backend.application.id, ['token:search'])).resolves.not.toThrow();
  });

  it('lets an application regenerate its own key, update and delete itself, whatever it holds', async () => {
    const s = await setup();
    const self = await s.managementWith('application:update', 'application:delete');
    const { key } = await s.regenerate.execute(self, self.applicationId);
    expect(s.ports.applications.all().find((a) => a.id === self.applicationId)!.keyHash).toBe(hashApiKey(key));
    await expect(s.update.execute(self, self.applicationId, { name: 'me', permissions: ['application:update'] })).resolves.toBeDefined();
    // ... but never above itself: an update of itself grants only what it holds.
    await expectRefused(s, s.update.execute(self, self.applicationId, { name: 'me', permissions: ['log:read'] }), ['log:read']);
    await s.remove.execute(self, self.applicationId);
    await expect(s.regenerate.execute(s.admin, self.applicationId)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('lets the all-powerful application act on every application of its tenant', async () => {
    const s = await setup();
    const minter = await s.create.execute(s.admin, {
      name: 'minter',
      type: 'private',
      permissions: ['token:read', 'proxy:invoke'],
      canCreateExpiringApplications: true,
    });
    const twin = await s.create.execute(s.admin, { name: 'twin', type: 'management', permissions: [...MANAGEMENT_PERMISSIONS] });
    for (const id of [minter.application.id, twin.application.id]) {
      await s.regenerate.execute(s.admin, id);
      await s.remove.execute(s.admin, id);
    }
  });

  it('answers an absent application with a 404 before judging authority', async () => {
    const s = await setup();
    const weak = await s.managementWith('application:update');
    await expect(s.regenerate.execute(weak, '7d0f4a8e-1c2b-4d3e-9f60-123456789abc')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('powersBeyond', () => {
  it('names each missing power once, in order, and nothing the caller covers', async () => {
    const s = await setup();
    const caller = await s.managementWith('proxy:read');
    const powers = {
      permissions: ['log:read', 'proxy:read', 'token:read'],
      rules: [{ priority: 1, container: '/a/', transform: 'mask' as const, permissions: ['log:read', 'proxy:invoke'] }],
      canCreateExpiringApplications: true,
    };
    expect(powersBeyond(caller, powers)).toEqual(['log:read', 'proxy:invoke', 'can_create_expiring_applications']);
    expect(powersBeyond(s.admin, powers)).toEqual([]);
  });
});

describe('rate limits are powers too: a limited key makes, frees or takes over nothing that may call more often', () => {
  const PER_MINUTE_10 = { limit: 10, windowSeconds: 60 };
  /** A management application holding every management permission, limited to `rateLimit`, as a caller. */
  async function limitedAdmin(s: Setup, rateLimit = PER_MINUTE_10, tenantRateLimit?: { limit: number; windowSeconds: number }) {
    const created = await s.create.execute(s.admin, { name: 'limited admin', type: 'management', permissions: [...MANAGEMENT_PERMISSIONS], rateLimit });
    return principalOf({ ...created.application, ...(tenantRateLimit ? { tenantRateLimit } : {}) });
  }
  const create = (s: Setup, caller: ReturnType<typeof principalOf>, rateLimit?: { limit: number; windowSeconds: number }) =>
    s.create.execute(caller, { name: 'child', type: 'management', permissions: ['log:read'], ...(rateLimit ? { rateLimit } : {}) });

  it('refuses creating an application with no limit or a looser one (a larger burst, or a faster rate)', async () => {
    const s = await setup();
    const caller = await limitedAdmin(s);
    await expectRefused(s, create(s, caller), ["no rate limit, looser than this application's own (10 requests per 60 s)"]);
    await expectRefused(s, create(s, caller, { limit: 11, windowSeconds: 60 }), ['a rate limit of 11 requests per 60 s']);
    // 5 a second is a burst of 5 but 300 a minute.
    await expectRefused(s, create(s, caller, { limit: 5, windowSeconds: 1 }), ['a rate limit of 5 requests per 1 s']);
  });

  it('allows creating an application limited as tightly or more', async () => {
    const s = await setup();
    const caller = await limitedAdmin(s);
    for (const rateLimit of [PER_MINUTE_10, { limit: 5, windowSeconds: 60 }, { limit: 10, windowSeconds: 120 }, { limit: 1, windowSeconds: 6 }]) {
      expect((await create(s, caller, rateLimit)).application.rateLimit).toEqual(rateLimit);
    }
  });

  it('refuses an application lifting or loosening its own limit, and lets it tighten it or regenerate its key', async () => {
    const s = await setup();
    const self = await limitedAdmin(s);
    const permissions = [...MANAGEMENT_PERMISSIONS];
    await expectRefused(s, s.update.execute(self, self.applicationId, { name: 'me', permissions }), ['no rate limit']);
    await expectRefused(s, s.update.execute(self, self.applicationId, { name: 'me', permissions, rateLimit: { limit: 100, windowSeconds: 60 } }), [
      '100 requests per 60 s',
    ]);
    const tightened = await s.update.execute(self, self.applicationId, { name: 'me', permissions, rateLimit: { limit: 5, windowSeconds: 60 } });
    expect(tightened.rateLimit).toEqual({ limit: 5, windowSeconds: 60 });
    await expect(s.regenerate.execute(self, self.applicationId)).resolves.toBeDefined();
  });

  it.each(['PUT', 'regenerate', 'delete'] as const)(
    'refuses %s on an application without a limit, or a looser one, and allows it on a tighter one',
    async (verb) => {
      const s = await setup();
      const caller = await limitedAdmin(s);
      const act = verbs(s).find(([name]) => name === verb)![1];
      const unlimited = await create(s, s.admin);
      await expectRefused(s, act(caller, unlimited.application.id, ['log:read']), ['that application has no rate limit']);
      const looser = await create(s, s.admin, { limit: 60, windowSeconds: 60 });
      await expectRefused(s, act(caller, looser.application.id, ['log:read']), ['that application has a rate limit of 60 requests per 60 s']);
      const tighter = await create(s, s.admin, { limit: 2, windowSeconds: 60 });
      // A PUT replaces the limit too: the tighter application keeps one within the caller's.
      const attempt =
        verb === 'PUT'
          ? s.update.execute(caller, tighter.application.id, { name: 'same', permissions: ['log:read'], rateLimit: { limit: 2, windowSeconds: 60 } })
          : act(caller, tighter.application.id, ['log:read']);
      await expect(attempt).resolves.not.toThrow();
    },
  );

  it("compares limits as they apply: without a limit of its own an application is held to its tenant's default", async () => {
    const s = await setup();
    const tenantDefault = { limit: 100, windowSeconds: 60 };
    // Held to the default only: it may create applications without a limit (they are held to the same default).
    const byDefault = { ...principalOf(s.root), rateLimit: tenantDefault, tenantRateLimit: tenantDefault };
    await expect(create(s, byDefault)).resolves.toBeDefined();
    await expectRefused(s, create(s, byDefault, { limit: 1000, windowSeconds: 60 }), ['1000 requests per 60 s']);
    // With a limit of its own, tighter than the default: an application without one would be held to the looser default.
    const ownLimit = await limitedAdmin(s, PER_MINUTE_10, tenantDefault);
    await expectRefused(s, create(s, ownLimit), ['a rate limit of 100 requests per 60 s']);
    await expect(create(s, ownLimit, PER_MINUTE_10)).resolves.toBeDefined();
  });

  it('leaves an unlimited caller free to grant any limit, or none', async () => {
    const s = await setup();
    await expect(create(s, s.admin)).resolves.toBeDefined();
    await expect(create(s, s.admin, { limit: 1_000_000, windowSeconds: 1 })).resolves.toBeDefined();
  });
});
