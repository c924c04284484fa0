import { inMemoryPorts } from '../testing/in-memory-ports';
import { PermissionDeniedError } from '../shared/domain-error';
import { CreateTenant } from '../tenants/tenant-commands';
import { CreateApplication, UpdateApplication } from './application-commands';
import { principalOf } from './principal';

/** A caller grants only what it holds itself, among the permissions its own type may hold. */
describe('granting permissions', () => {
  async function setup() {
    const ports = inMemoryPorts();
    const { application } = await new CreateTenant(ports.uow, ports.clock).execute('acme');
    const create = new CreateApplication(ports.uow, ports.clock, ports.expiry);
    const update = new UpdateApplication(ports.uow, ports.clock);
    const admin = principalOf(application);
    const limited = await create.execute(admin, { name: 'provisioner', type: 'management', permissions: ['application:create', 'application:update'] });
    return { ports, create, update, admin, limited: principalOf(limited.application) };
  }

  it('refuses a management key minting a key with a management permission it lacks', async () => {
    const s = await setup();
    await expect(
      s.create.execute(s.limited, { name: 'escalated', type: 'management', permissions: ['log:read'] }),
    ).rejects.toThrow(new PermissionDeniedError('log:read'));
    expect(s.ports.uow.events.filter((e) => e.entityType === 'application' && e.operation === 'create')).toHaveLength(2);
  });

  it('refuses raising an application above the caller through an update', async () => {
    const s = await setup();
    const target = await s.create.execute(s.limited, { name: 'target', type: 'management', permissions: ['application:create'] });
    await expect(
      s.update.execute(s.limited, target.application.id, { name: 'target', permissions: ['application:create', 'proxy:delete'] }),
    ).rejects.toBeInstanceOf(PermissionDeniedError);
  });

  it('still lets a management key provision token permissions its own type cannot hold', async () => {
    const s = await setup();
    const { application } = await s.create.execute(s.limited, { name: 'backend', type: 'private', permissions: ['token:read', 'token:use'] });
    expect(application.permissions).toEqual(['token:read', 'token:use']);
  });

  it('lets a private key with can_create_expiring_applications grant only the token permissions it holds', async () => {
    const s = await setup();
    const minter = await s.create.execute(s.admin, {
      name: 'minter',
      type: 'private',
      permissions: ['token:read'],
      canCreateExpiringApplications: true,
    });
    const principal = principalOf(minter.application);
    const rule = { priority: 1, conditions: [{ attribute: 'id' as const, operator: 'equals' as const, value: 'tok_1' }], transform: 'reveal' as const };
    await expect(s.create.execute(principal, { name: 'ok', type: 'expiring', rules: [{ ...rule, permissions: ['token:read'] }] })).resolves.toBeDefined();
    const other = await s.create.execute(s.admin, { name: 'no-read', type: 'private', permissions: ['token:search'], canCreateExpiringApplications: true });
    await expect(
      s.create.execute(principalOf(other.application), { name: 'escalated', type: 'expiring', permissions: ['token:read'] }),
    ).rejects.toBeInstanceOf(PermissionDeniedError);
  });
});
