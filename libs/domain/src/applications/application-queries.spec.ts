import { inMemoryPorts } from '../testing/in-memory-ports';
import { AuthenticationError, NotFoundError, TooManyRequestsError } from '../shared/domain-error';
import { AuthenticationThrottle } from '../rate-limits/authentication-throttle';
import { InMemoryRateCounter } from '../rate-limits/rate-counter';
import { decodeCursor } from '../shared/page';
import { CreateTenant } from '../tenants/tenant-commands';
import { CreateApplication } from './application-commands';
import { AuthenticateApiKey, GetApplication, ListApplications } from './application-queries';
import { principalOf } from './principal';

async function setup() {
  const ports = inMemoryPorts();
  const created = await new CreateTenant(ports.uow, ports.clock).execute('acme');
  const admin = principalOf(created.application);
  return {
    ...ports,
    admin,
    adminKey: created.key,
    create: new CreateApplication(ports.uow, ports.clock, ports.expiry),
    authenticate: new AuthenticateApiKey(ports.applications, ports.clock),
  };
}

describe('AuthenticateApiKey', () => {
  it('resolves a key to its application and principal', async () => {
    const s = await setup();
    const { principal, application } = await s.authenticate.execute(s.adminKey);
    expect(application.id).toBe(s.admin.applicationId);
    expect(principal).toEqual(s.admin);
    expect(principal.permissions.has('application:create')).toBe(true);
  });

  it.each([
    ['no key', undefined],
    ['an empty key', ''],
    ['a key without the prefix', 'x'.repeat(44)],
    ['a truncated key', 'key_abc'],
    ['a 10 KB key', `key_${'a'.repeat(10_000)}`],
    ['a well-formed unknown key', `key_${'A'.repeat(40)}`],
  ])('refuses %s', async (_, key) => {
    const s = await setup();
    await expect(s.authenticate.execute(key)).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('refuses a key that differs from a real one in its last character', async () => {
    const s = await setup();
    const last = s.adminKey.at(-1) === 'a' ? 'b' : 'a';
    await expect(s.authenticate.execute(s.adminKey.slice(0, -1) + last)).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('refuses the key of an expiring application from expires_at on, before anything deleted it', async () => {
    const s = await setup();
    const { application, key } = await s.create.execute(s.admin, { name: 'e', type: 'expiring', permissions: ['token:read'] });
    s.clock.set(new Date(application.expiresAt!.getTime() - 1));
    await expect(s.authenticate.execute(key)).resolves.toBeDefined();
    s.clock.set(application.expiresAt!);
    await expect(s.authenticate.execute(key)).rejects.toBeInstanceOf(AuthenticationError);
    expect(await s.applications.findById(s.admin.tenantId, application.id)).not.toBeNull();
  });

  it('grants can_create_expiring_applications to private principals only', async () => {
    const s = await setup();
    const { key } = await s.create.execute(s.admin, { name: 'p', type: 'private', permissions: ['token:read'], canCreateExpiringApplications: true });
    expect((await s.authenticate.execute(key)).principal.canCreateExpiringApplications).toBe(true);
    expect((await s.authenticate.execute(s.adminKey)).principal.canCreateExpiringApplications).toBe(false);
  });
});

describe('AuthenticateApiKey with the failed-authentication throttle', () => {
  async function throttled() {
    const s = await setup();
    const throttle = new AuthenticationThrottle(new InMemoryRateCounter(s.clock), { limit: 2, windowSeconds: 60 }, s.clock);
    const authenticate = new AuthenticateApiKey(s.applications, s.clock, throttle);
    const lookups = jest.spyOn(s.applications, 'findByKeyHash');
    return { ...s, authenticate, lookups };
  }
  const guess = `key_${'A'.repeat(40)}`;

  it('answers 429 past the limit, then refuses the address without looking any key up, even a real one', async () => {
    const s = await throttled();
    await expect(s.authenticate.execute(guess, '203.0.113.7')).rejects.toBeInstanceOf(AuthenticationError);
    await expect(s.authenticate.execute('key_short', '203.0.113.7')).rejects.toBeInstanceOf(AuthenticationError);
    await expect(s.authenticate.execute(guess, '203.0.113.7')).rejects.toBeInstanceOf(TooManyRequestsError);
    const lookups = s.lookups.mock.calls.length;
    await expect(s.authenticate.execute(guess, '203.0.113.7')).rejects.toBeInstanceOf(TooManyRequestsError);
    await expect(s.authenticate.execute(s.adminKey, '203.0.113.7')).rejects.toBeInstanceOf(TooManyRequestsError);
    expect(s.lookups.mock.calls.length).toBe(lookups);
  });

  it('never counts a real key, however often it is used, nor a missing one', async () => {
    const s = await throttled();
    for (let i = 0; i < 10; i++) await s.authenticate.execute(s.adminKey, '203.0.113.7');
    for (let i = 0; i < 5; i++) await expect(s.authenticate.execute(undefined, '203.0.113.7')).rejects.toBeInstanceOf(AuthenticationError);
    await expect(s.authenticate.execute(guess, '203.0.113.7')).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('counts the key of an expired application as a failure', async () => {
    const s = await throttled();
    const { application, key } = await s.create.execute(s.admin, { name: 'e', type: 'expiring', permissions: ['token:read'] });
    s.clock.set(application.expiresAt!);
    await expect(s.authenticate.execute(key, '203.0.113.7')).rejects.toBeInstanceOf(AuthenticationError);
    await expect(s.authenticate.execute(key, '203.0.113.7')).rejects.toBeInstanceOf(AuthenticationError);
    await expect(s.authenticate.execute(key, '203.0.113.7')).rejects.toBeInstanceOf(TooManyRequestsError);
  });

  it('keeps serving, from a blocked address, a real key that authenticated from it before: its neighbours behind one load balancer', async () => {
    const s = await throttled();
    await s.authenticate.execute(s.adminKey, '203.0.113.7');
    for (let i = 0; i < 3; i++) await s.authenticate.execute(guess, '203.0.113.7').catch(() => undefined);
    await expect(s.authenticate.execute(guess, '203.0.113.7')).rejects.toBeInstanceOf(TooManyRequestsError);
    for (let i = 0; i < 5; i++) await expect(s.authenticate.execute(s.adminKey, '203.0.113.7')).resolves.toBeDefined();
    // The guesser's next guesses are still refused unseen, the right ones too (no oracle).
    const lookups = s.lookups.mock.calls.length;
    const { key: unseen } = await s.create.execute(s.admin, { name: 'unseen', type: 'private', permissions: ['token:read'] });
    await expect(s.authenticate.execute(unseen, '203.0.113.7')).rejects.toBeInstanceOf(TooManyRequestsError);
    await expect(s.authenticate.execute(guess, '203.0.113.7')).rejects.toBeInstanceOf(TooManyRequestsError);
    expect(s.lookups.mock.calls.length).toBe(lookups);
  });

  it('keeps serving real keys from other addresses while one is blocked', async () => {
    const s = await throttled();
    for (let i = 0; i < 3; i++) await s.authenticate.execute(guess, '203.0.113.7').catch(() => undefined);
    await expect(s.authenticate.execute(guess, '203.0.113.7')).rejects.toBeInstanceOf(TooManyRequestsError);
    await expect(s.authenticate.execute(s.adminKey, '198.51.100.1')).resolves.toBeDefined();
  });
});

describe("AuthenticateApiKey.asApplication: a proxy's svc, bound by its last writer's authority at every call", () => {
  it("acts as the proxy's application only while the writer holds what that application can do", async () => {
    const s = await setup();
    const { application: writer } = await s.create.execute(s.admin, { name: 'writer', type: 'management', permissions: ['proxy:update'] });
    const { application: bound } = await s.create.execute(s.admin, { name: 'bound', type: 'private', permissions: ['token:read'] });
    const tenant = s.admin.tenantId;
    expect((await s.authenticate.asApplication(tenant, bound.id, writer.id)).applicationId).toBe(bound.id);
    // Given more since (the power to mint keys), beyond the writer: refused.
    await s.applications.update({ ...bound, canCreateExpiringApplications: true });
    await expect(s.authenticate.asApplication(tenant, bound.id, writer.id)).rejects.toThrow(/svc is refused: the application that last wrote this proxy may not lend svc to .*can_create_expiring_applications/);
    // Vouched for by a writer that holds it, or by none needed (the application itself): served.
    expect((await s.authenticate.asApplication(tenant, bound.id, s.admin.applicationId)).canCreateExpiringApplications).toBe(true);
    expect((await s.authenticate.asApplication(tenant, bound.id, bound.id)).applicationId).toBe(bound.id);
    // A writer that is gone, or none recorded, vouches for nothing.
    for (const gone of [null, '00000000-0000-4000-8000-000000000000']) {
      await expect(s.authenticate.asApplication(tenant, bound.id, gone)).rejects.toThrow(/last wrote this proxy no longer exists/);
    }
  });
});

describe('GetApplication', () => {
  it("finds the tenant's own application and nobody else's", async () => {
    const s = await setup();
    const other = principalOf((await new CreateTenant(s.uow, s.clock).execute('other')).application);
    const get = new GetApplication(s.applications);
    expect((await get.execute(s.admin, s.admin.applicationId)).id).toBe(s.admin.applicationId);
    await expect(get.execute(other, s.admin.applicationId)).rejects.toBeInstanceOf(NotFoundError);
    await expect(get.execute(s.admin, '00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('ListApplications', () => {
  it('lists the tenant newest first, with filters and both paging modes', async () => {
    const s = await setup();
    await new CreateTenant(s.uow, s.clock).execute('other');
    const ids = [s.admin.applicationId];
    for (let i = 0; i < 4; i++) {
      s.clock.advance(1000);
      ids.push((await s.create.execute(s.admin, { name: `a${i}`, type: i % 2 ? 'public' : 'private', permissions: ['token:create'] })).application.id);
    }
    const list = new ListApplications(s.applications);
    const all = await list.execute(s.admin, {}, { page: 1, size: 20 });
    expect(all.items.map((a) => a.id)).toEqual([...ids].reverse());
    expect(all.totalItems).toBe(5);
    expect(all.next).toBeUndefined();

    const first = await list.execute(s.admin, {}, { page: 1, size: 2 });
    expect(first.items.map((a) => a.id)).toEqual([ids[4], ids[3]]);
    expect(decodeCursor(first.next!).id).toBe(ids[3]);
    const second = await list.execute(s.admin, {}, { page: 1, size: 2, start: first.next });
    expect(second.items.map((a) => a.id)).toEqual([ids[2], ids[1]]);
    const third = await list.execute(s.admin, {}, { page: 1, size: 2, start: second.next });
    expect(third.items.map((a) => a.id)).toEqual([ids[0]]);
    expect(third.next).toBeUndefined();

    expect((await list.execute(s.admin, { types: ['public'] }, { page: 1, size: 20 })).items.map((a) => a.id)).toEqual([ids[4], ids[2]]);
    expect((await list.execute(s.admin, { ids: [ids[1]!, ids[3]!] }, { page: 1, size: 20 })).totalItems).toBe(2);
  });
});
