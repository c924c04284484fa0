import { inMemoryPorts } from '../testing/in-memory-ports';
import { hashApiKey } from '../applications/api-key';
import { AuthenticateApiKey } from '../applications/application-queries';
import { MANAGEMENT_PERMISSIONS, permissionsFor } from '../applications/permissions';
import { ValidationError } from '../shared/domain-error';
import { CreateTenant } from './tenant-commands';

describe('CreateTenant', () => {
  it('creates the tenant and a management application holding every management permission', async () => {
    const s = inMemoryPorts();
    const created = await new CreateTenant(s.uow, s.clock).execute('acme');
    expect(s.tenants.all()).toEqual([{ id: created.tenant.id, name: 'acme', createdAt: s.clock.now(), defaultRateLimit: null }]);
    expect(s.applications.all()).toEqual([created.application]);
    expect(created.application).toMatchObject({ tenantId: created.tenant.id, type: 'management', rules: [], expiresAt: null, createdBy: null });
    expect([...created.application.permissions].sort()).toEqual(permissionsFor('management').map((p) => p.type).sort());
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
      expect.objectContaining({ tenantId: created.tenant.id, entityType: 'tenant', entityId: created.tenant.id, operation: 'create', actorType: 'system', actorId: null }),
      expect.objectContaining({ tenantId: created.tenant.id, entityType: 'application', entityId: created.application.id, operation: 'create', actorType: 'system' }),
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
