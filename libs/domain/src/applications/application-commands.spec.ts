import { inMemoryPorts } from '../testing/in-memory-ports';
import { AuthenticationError, NotFoundError, ValidationError } from '../shared/domain-error';
import { CreateTenant } from '../tenants/tenant-commands';
import { hashApiKey } from './api-key';
import { CreateApplication, DeleteApplication, RegenerateApplicationKey, UpdateApplication } from './application-commands';
import { GetApplication } from './application-queries';
import { AuthenticateApiKey } from './authenticate-api-key';
import { principalOf } from './principal';

async function setup() {
  const ports = inMemoryPorts();
  const tenantOf = async (name: string) => principalOf((await new CreateTenant(ports.uow, ports.clock).execute(name)).application);
  const admin = await tenantOf('acme');
  const stranger = await tenantOf('other');
  const create = new CreateApplication(ports.uow, ports.clock, ports.expiry);
  const { application: target, key } = await create.execute(admin, {
    name: 'backend',
    type: 'private',
    permissions: ['token:read'],
    rules: [{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:read'] }],
    canCreateExpiringApplications: true,
  });
  ports.uow.events.length = 0;
  ports.clock.advance(5_000);
  return {
    ...ports,
    admin,
    stranger,
    create,
    target,
    key,
    update: new UpdateApplication(ports.uow, ports.clock),
    regenerate: new RegenerateApplicationKey(ports.uow, ports.clock),
    remove: new DeleteApplication(ports.uow),
    authenticate: new AuthenticateApiKey(ports.applications, ports.clock),
    get: new GetApplication(ports.applications),
  };
}

type Setup = Awaited<ReturnType<typeof setup>>;

function expectUnchanged(s: Setup) {
  return expect(s.applications.findById(s.admin.tenantId, s.target.id)).resolves.toEqual(s.target);
}

describe('UpdateApplication (PUT replaces)', () => {
  it('replaces the name, permissions, rules and flag, and stamps modified_by/at', async () => {
    const s = await setup();
    const updated = await s.update.execute(s.admin, s.target.id, {
      name: 'renamed',
      permissions: ['token:search', 'token:search'],
      rules: [{ priority: 2, container: '/x/', transform: 'mask', permissions: ['token:use'] }],
      canCreateExpiringApplications: false,
    });
    expect(updated).toEqual({
      ...s.target,
      name: 'renamed',
      permissions: ['token:search'],
      rules: [{ priority: 2, container: '/x/', transform: 'mask', permissions: ['token:use'] }],
      canCreateExpiringApplications: false,
      modifiedBy: s.admin.applicationId,
      modifiedAt: s.clock.now(),
    });
    expect(await s.get.execute(s.admin, s.target.id)).toEqual(updated);
  });

  it('clears what the body omits', async () => {
    const s = await setup();
    const updated = await s.update.execute(s.admin, s.target.id, { name: 'backend', permissions: ['token:read'] });
    expect(updated.rules).toEqual([]);
    expect(updated.canCreateExpiringApplications).toBeNull();
  });

  it('keeps the key, the type, the creator and the creation time', async () => {
    const s = await setup();
    const updated = await s.update.execute(s.admin, s.target.id, { name: 'b', permissions: ['token:read'] });
    expect(updated).toMatchObject({ keyHash: s.target.keyHash, type: 'private', createdBy: s.target.createdBy, createdAt: s.target.createdAt });
    await expect(s.authenticate.execute(s.key)).resolves.toBeDefined();
  });

  it('records one update event by the caller', async () => {
    const s = await setup();
    await s.update.execute(s.admin, s.target.id, { name: 'b', permissions: ['token:read'] });
    expect(s.uow.events).toEqual([
      expect.objectContaining({
        operation: 'update',
        entityType: 'application',
        entityId: s.target.id,
        actorId: s.admin.applicationId,
        actorType: 'application',
      }),
    ]);
    expect(s.uow.events[0]!.message).not.toContain(s.key);
  });

  it.each([
    ['omitting both permissions and rules', { name: 'b' }, 'permissions'],
    ['an empty name', { name: ' ', permissions: ['token:read'] }, 'name'],
    ['a permission the type may not hold', { name: 'b', permissions: ['application:read'] }, 'permissions[0]'],
    [
      'conditions on a private application',
      {
        name: 'b',
        rules: [
          {
            priority: 1,
            conditions: [{ attribute: 'id' as const, operator: 'equals' as const, value: 'x' }],
            transform: 'reveal' as const,
            permissions: ['token:read'],
          },
        ],
      },
      'rules[0].conditions',
    ],
  ])('refuses %s, changing and recording nothing', async (_, input, field) => {
    const s = await setup();
    const error = await s.update.execute(s.admin, s.target.id, input).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect(Object.keys((error as ValidationError).fieldErrors!)).toContain(field);
    await expectUnchanged(s);
    expect(s.uow.events).toEqual([]);
  });

  it('validates against the stored type: can_create_expiring_applications stays private-only', async () => {
    const s = await setup();
    const { application } = await s.create.execute(s.admin, { name: 'pub', type: 'public', permissions: ['token:create'] });
    const error = await s.update
      .execute(s.admin, application.id, { name: 'pub', permissions: ['token:create'], canCreateExpiringApplications: true })
      .catch((e: unknown) => e);
    expect((error as ValidationError).fieldErrors).toHaveProperty('can_create_expiring_applications');
  });

  it("is a NotFoundError for another tenant's application, which stays as it was", async () => {
    const s = await setup();
    await expect(s.update.execute(s.stranger, s.target.id, { name: 'x', permissions: ['token:read'] })).rejects.toBeInstanceOf(NotFoundError);
    await expectUnchanged(s);
    expect(s.uow.events).toEqual([]);
  });
});

describe('RegenerateApplicationKey', () => {
  it('issues a new key; the old hash is gone at once', async () => {
    const s = await setup();
    const { application, key } = await s.regenerate.execute(s.admin, s.target.id);
    expect(key).toMatch(/^key_[0-9A-Za-z]{32,}$/);
    expect(key).not.toBe(s.key);
    expect(application.keyHash).toBe(hashApiKey(key));
    expect(await s.applications.findByKeyHash(hashApiKey(s.key))).toBeNull();
    expect((await s.applications.findByKeyHash(hashApiKey(key)))?.id).toBe(s.target.id);
    await expect(s.authenticate.execute(s.key)).rejects.toBeInstanceOf(AuthenticationError);
    expect((await s.authenticate.execute(key)).principal.applicationId).toBe(s.target.id);
  });

  it('changes nothing else but the modification stamp', async () => {
    const s = await setup();
    const { application } = await s.regenerate.execute(s.admin, s.target.id);
    expect(application).toEqual({ ...s.target, keyHash: application.keyHash, modifiedBy: s.admin.applicationId, modifiedAt: s.clock.now() });
  });

  it("records an update 'Application key regenerated', never the key", async () => {
    const s = await setup();
    const { key } = await s.regenerate.execute(s.admin, s.target.id);
    expect(s.uow.events).toEqual([
      expect.objectContaining({ operation: 'update', entityId: s.target.id, actorId: s.admin.applicationId, message: 'Application key regenerated' }),
    ]);
    expect(s.uow.events[0]!.message).not.toContain(key);
  });

  it("is a NotFoundError for another tenant's application, whose key keeps working", async () => {
    const s = await setup();
    await expect(s.regenerate.execute(s.stranger, s.target.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(s.authenticate.execute(s.key)).resolves.toBeDefined();
    expect(s.uow.events).toEqual([]);
  });
});

describe('DeleteApplication', () => {
  it('removes the application and its key, recording one delete', async () => {
    const s = await setup();
    await s.remove.execute(s.admin, s.target.id);
    expect(await s.applications.findById(s.admin.tenantId, s.target.id)).toBeNull();
    await expect(s.authenticate.execute(s.key)).rejects.toBeInstanceOf(AuthenticationError);
    expect(s.uow.events).toEqual([
      expect.objectContaining({
        operation: 'delete',
        entityType: 'application',
        entityId: s.target.id,
        actorId: s.admin.applicationId,
        actorType: 'application',
      }),
    ]);
    expect(s.uow.events[0]!.message).toContain('backend');
  });

  it('is a NotFoundError the second time, recording nothing more', async () => {
    const s = await setup();
    await s.remove.execute(s.admin, s.target.id);
    await expect(s.remove.execute(s.admin, s.target.id)).rejects.toBeInstanceOf(NotFoundError);
    expect(s.uow.events).toHaveLength(1);
  });

  it("is a NotFoundError for another tenant's application, which survives", async () => {
    const s = await setup();
    await expect(s.remove.execute(s.stranger, s.target.id)).rejects.toBeInstanceOf(NotFoundError);
    await expectUnchanged(s);
    expect(s.uow.events).toEqual([]);
  });
});
