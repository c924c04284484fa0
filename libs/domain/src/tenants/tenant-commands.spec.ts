import { inMemoryPorts } from '../testing/in-memory-ports';
import { hashApiKey } from '../applications/api-key';
import { AuthenticateApiKey } from '../applications/authenticate-api-key';
import { MANAGEMENT_PERMISSIONS, permissionsFor } from '../applications/permissions';
import { ConflictError, NotFoundError, ValidationError } from '../shared/domain-error';
import { CreateTenant, RotateManagementKey } from './tenant-commands';
import { GetTenant, ListTenants } from './tenant-queries';

describe('CreateTenant', () => {
  it('creates the tenant and a management application holding every management permission', async () => {
    const s = inMemoryPorts();
    const created = await new CreateTenant(s.uow, s.clock).execute('acme');
    expect(s.tenants.all()).toEqual([{ id: created.tenant.id, name: 'acme', createdAt: s.clock.now(), defaultRateLimit: null }]);
    expect(s.applications.all()).toEqual([created.application]);
    expect(created.application).toMatchObject({ tenantId: created.tenant.id, type: 'management', rules: [], expiresAt: null, createdBy: null });
    expect([...created.application.permissions].sort()).toEqual(
      permissionsFor('management')
        .map((p) => p.type)
        .sort(),
    );
    expect(created.application.permissions).toHaveLength(MANAGEMENT_PERMISSIONS.length);
  });

  it('returns a key that authenticates, and stores only its hash', async () => {
    const s = inMemoryPorts();
    const created = await new CreateTenant(s.uow, s.clock).execute('acme');
    expect(created.key).toMatch(/^key_[0-9A-Za-z]{32,}$/);
    expect(created.application.keyHash).toBe(hashApiKey(created.key));
    expect(JSON.stringify(s.applications.all())).not.toContain(created.key);
    const { principal } = await new AuthenticateApiKey(s.applications, s.clock).execute(created.key);
    expect(principal.tenantId).toBe(created.tenant.id);
  });

  it('records the tenant and the application, both by the system', async () => {
    const s = inMemoryPorts();
    const created = await new CreateTenant(s.uow, s.clock).execute('acme');
    expect(s.uow.events).toEqual([
      expect.objectContaining({
        tenantId: created.tenant.id,
        entityType: 'tenant',
        entityId: created.tenant.id,
        operation: 'create',
        actorType: 'system',
        actorId: null,
      }),
      expect.objectContaining({
        tenantId: created.tenant.id,
        entityType: 'application',
        entityId: created.application.id,
        operation: 'create',
        actorType: 'system',
      }),
    ]);
    for (const event of s.uow.events) expect(event.message).not.toContain(created.key);
  });

  it('gives every tenant its own key', async () => {
    const s = inMemoryPorts();
    const a = await new CreateTenant(s.uow, s.clock).execute('a');
    const b = await new CreateTenant(s.uow, s.clock).execute('b');
    expect(a.tenant.id).not.toBe(b.tenant.id);
    expect(a.key).not.toBe(b.key);
    expect(await s.tenants.count()).toBe(2);
  });

  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['201 characters', 't'.repeat(201)],
    ['holding a NUL', 'a\u0000b'],
  ])('refuses a name that is %s, writing nothing', async (_, name) => {
    const s = inMemoryPorts();
    await expect(new CreateTenant(s.uow, s.clock).execute(name)).rejects.toBeInstanceOf(ValidationError);
    expect(await s.tenants.count()).toBe(0);
    expect(s.applications.all()).toEqual([]);
    expect(s.uow.events).toEqual([]);
  });

  it('writes nothing when the transaction fails half way', async () => {
    const s = inMemoryPorts();
    const first = await new CreateTenant(s.uow, s.clock).execute('a');
    // The application insert fails after the tenant row was written: the tenant must be rolled back.
    s.applications.insert = async () => {
      throw new Error('disk full');
    };
    await expect(new CreateTenant(s.uow, s.clock).execute('b')).rejects.toThrow('disk full');
    expect(s.tenants.all().map((t) => t.id)).toEqual([first.tenant.id]);
    expect(s.uow.events).toHaveLength(2);
  });
});

describe('tenant names', () => {
  it('are unique: a second tenant of the same name is refused and nothing is written', async () => {
    const s = inMemoryPorts();
    await new CreateTenant(s.uow, s.clock).execute('default');
    await expect(new CreateTenant(s.uow, s.clock).execute('default')).rejects.toEqual(new ConflictError("A tenant named 'default' already exists"));
    expect(s.tenants.all()).toHaveLength(1);
    expect(s.applications.all()).toHaveLength(1);
    expect(s.uow.events).toHaveLength(2);
  });

  it('find a tenant, as does its id; list them oldest first', async () => {
    const s = inMemoryPorts();
    const a = await new CreateTenant(s.uow, s.clock).execute('a');
    s.clock.set('2026-11-22T10:00:00.000Z');
    const b = await new CreateTenant(s.uow, s.clock).execute('b');
    expect(await new GetTenant(s.tenants).execute('b')).toEqual(b.tenant);
    expect(await new GetTenant(s.tenants).execute(a.tenant.id.toUpperCase())).toEqual(a.tenant);
    await expect(new GetTenant(s.tenants).execute('c')).rejects.toBeInstanceOf(NotFoundError);
    expect(await new ListTenants(s.tenants).execute()).toEqual([a.tenant, b.tenant]);
  });
});

describe('RotateManagementKey', () => {
  it("gives the tenant's own management application a new key, its full grant back, and records a system update", async () => {
    const s = inMemoryPorts();
    const created = await new CreateTenant(s.uow, s.clock).execute('acme');
    // The tenant's admins narrowed it and made it expire; then they lost the key.
    await s.applications.update({
      ...created.application,
      permissions: ['log:read'],
      expiresAt: new Date('2027-01-01T00:00:00Z'),
      previousKeyHash: hashApiKey('key_old'),
      previousKeyExpiresAt: new Date('2027-01-01T00:00:00Z'),
    });
    s.clock.set('2026-11-23T10:00:00.000Z');
    const rotated = await new RotateManagementKey(s.uow, s.clock).execute('acme');

    expect(rotated).toMatchObject({ recreated: false, tenant: created.tenant, application: { id: created.application.id } });
    expect(rotated.key).not.toBe(created.key);
    const stored = s.applications.all().find((a) => a.id === created.application.id)!;
    expect(stored).toMatchObject({
      keyHash: hashApiKey(rotated.key),
      previousKeyHash: null,
      previousKeyExpiresAt: null,
      expiresAt: null,
      rules: [],
      modifiedBy: null,
      modifiedAt: s.clock.now(),
    });
    expect([...stored.permissions].sort()).toEqual([...MANAGEMENT_PERMISSIONS].sort());
    const auth = new AuthenticateApiKey(s.applications, s.clock);
    await expect(auth.execute(created.key)).rejects.toThrow();
    expect((await auth.execute(rotated.key)).principal.applicationId).toBe(created.application.id);
    expect(s.uow.events.at(-1)).toMatchObject({
      entityType: 'application',
      entityId: created.application.id,
      operation: 'update',
      actorType: 'system',
      actorId: null,
    });
    expect(s.uow.events.at(-1)!.message).not.toContain(rotated.key);
  });

  it('creates a new management application when the original was deleted, recorded as a system create', async () => {
    const s = inMemoryPorts();
    const created = await new CreateTenant(s.uow, s.clock).execute('acme');
    await s.applications.delete(created.tenant.id, created.application.id);
    const rotated = await new RotateManagementKey(s.uow, s.clock).execute(created.tenant.id);
    expect(rotated.recreated).toBe(true);
    expect(rotated.application).toMatchObject({ tenantId: created.tenant.id, type: 'management', createdBy: null, keyHash: hashApiKey(rotated.key) });
    expect(s.applications.all().map((a) => a.id)).toEqual([rotated.application.id]);
    expect(s.uow.events.at(-1)).toMatchObject({ entityId: rotated.application.id, operation: 'create', actorType: 'system' });
  });

  it('refuses a tenant that does not exist, writing nothing', async () => {
    const s = inMemoryPorts();
    await expect(new RotateManagementKey(s.uow, s.clock).execute('nobody')).rejects.toBeInstanceOf(NotFoundError);
    expect(s.uow.events).toEqual([]);
  });
});
