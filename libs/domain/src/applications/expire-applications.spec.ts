import { inMemoryPorts } from '../testing/in-memory-ports';
import { CreateTenant } from '../tenants/tenant-commands';
import { CreateApplication, DeleteApplication, RegenerateApplicationKey } from './application-commands';
import { AuthenticateApiKey } from './authenticate-api-key';
import { ExpireApplications } from './expire-applications';
import { principalOf } from './principal';

const MINUTE = 60_000;

async function setup() {
  const ports = inMemoryPorts();
  const admin = principalOf((await new CreateTenant(ports.uow, ports.clock).execute('acme')).application);
  const create = new CreateApplication(ports.uow, ports.clock, ports.expiry);
  // The create events are not the subject here: only what happens after them is recorded.
  const expiring = async (minutes: number) => {
    const expiresAt = new Date(ports.clock.now().getTime() + minutes * MINUTE);
    const { application } = await create.execute(admin, { name: `e${minutes}`, type: 'expiring', permissions: ['token:read'], expiresAt });
    ports.uow.events.length = 0;
    return application;
  };
  ports.uow.events.length = 0;
  return { ...ports, admin, create, expiring, expire: new ExpireApplications(ports.uow, ports.applications, ports.clock) };
}

describe('ExpireApplications.expireOne', () => {
  it('does nothing before expires_at', async () => {
    const s = await setup();
    const app = await s.expiring(10);
    s.clock.set(new Date(app.expiresAt!.getTime() - 1));
    expect(await s.expire.expireOne(app.tenantId, app.id)).toBe(false);
    expect(await s.applications.findById(app.tenantId, app.id)).not.toBeNull();
    expect(s.uow.events).toEqual([]);
  });

  it('deletes at expires_at, logged as a delete by the system', async () => {
    const s = await setup();
    const app = await s.expiring(10);
    s.clock.set(app.expiresAt!);
    expect(await s.expire.expireOne(app.tenantId, app.id)).toBe(true);
    expect(await s.applications.findById(app.tenantId, app.id)).toBeNull();
    expect(s.uow.events).toEqual([
      expect.objectContaining({ operation: 'delete', entityType: 'application', entityId: app.id, tenantId: app.tenantId, actorId: null, actorType: 'system' }),
    ]);
    expect(s.uow.events[0]!.message).toMatch(/expired/);
  });

  it('records nothing when run a second time', async () => {
    const s = await setup();
    const app = await s.expiring(1);
    s.clock.advance(MINUTE);
    await s.expire.expireOne(app.tenantId, app.id);
    expect(await s.expire.expireOne(app.tenantId, app.id)).toBe(false);
    expect(s.uow.events).toHaveLength(1);
  });

  it('is a stale job that does nothing after the application was deleted', async () => {
    const s = await setup();
    const app = await s.expiring(1);
    await new DeleteApplication(s.uow).execute(s.admin, app.id);
    s.clock.advance(MINUTE);
    expect(await s.expire.expireOne(app.tenantId, app.id)).toBe(false);
    expect(s.uow.events.map((e) => e.actorType)).toEqual(['application']);
  });

  it('ignores applications that never expire, and a wrong tenant', async () => {
    const s = await setup();
    s.clock.advance(48 * 60 * MINUTE);
    expect(await s.expire.expireOne(s.admin.tenantId, s.admin.applicationId)).toBe(false);
    const app = await s.expiring(1);
    s.clock.advance(MINUTE);
    expect(await s.expire.expireOne('00000000-0000-4000-8000-000000000000', app.id)).toBe(false);
    expect(await s.applications.findById(s.admin.tenantId, s.admin.applicationId)).not.toBeNull();
    expect(await s.applications.findById(app.tenantId, app.id)).not.toBeNull();
  });

  it('a regenerated key does not extend the life of the application: an early job does nothing, the due one deletes it', async () => {
    const s = await setup();
    const app = await s.expiring(5);
    const { key } = await new RegenerateApplicationKey(s.uow, s.clock).execute(s.admin, app.id);
    expect(await s.expire.expireOne(app.tenantId, app.id)).toBe(false);
    expect(await s.applications.findById(app.tenantId, app.id)).not.toBeNull();
    s.clock.set(app.expiresAt!);
    await expect(new AuthenticateApiKey(s.applications, s.clock).execute(key)).rejects.toThrow();
    expect(await s.expire.expireOne(app.tenantId, app.id)).toBe(true);
    expect(s.uow.events.map((e) => e.operation)).toEqual(['update', 'delete']);
  });
});

describe('ExpireApplications.sweep', () => {
  it('deletes everything due, in batches, and nothing else', async () => {
    const s = await setup();
    const due = [await s.expiring(1), await s.expiring(2), await s.expiring(3), await s.expiring(4), await s.expiring(5)];
    const later = await s.expiring(30);
    s.clock.advance(5 * MINUTE);
    expect(await s.expire.sweep(2)).toBe(5);
    for (const app of due) expect(await s.applications.findById(app.tenantId, app.id)).toBeNull();
    expect(await s.applications.findById(later.tenantId, later.id)).not.toBeNull();
    expect(await s.applications.findById(s.admin.tenantId, s.admin.applicationId)).not.toBeNull();
    expect(s.uow.events.map((e) => [e.entityId, e.operation, e.actorType])).toEqual(due.map((a) => [a.id, 'delete', 'system']));
  });

  it('records nothing on a second run', async () => {
    const s = await setup();
    await s.expiring(1);
    s.clock.advance(MINUTE);
    expect(await s.expire.sweep()).toBe(1);
    expect(await s.expire.sweep()).toBe(0);
    expect(s.uow.events).toHaveLength(1);
  });

  it('finds nothing to do before anything is due', async () => {
    const s = await setup();
    await s.expiring(1);
    expect(await s.expire.sweep()).toBe(0);
    expect(s.uow.events).toEqual([]);
  });
});
