import { withTenant } from '../testing/tenant-spec-fixture';
import { AuthenticationError, TooManyRequestsError } from '../shared/domain-error';
import { AuthenticationThrottle } from '../rate-limits/authentication-throttle';
import { InMemoryRateCounter } from '../rate-limits/rate-counter';
import { AuthenticateApiKey } from './authenticate-api-key';

async function setup() {
  const s = await withTenant();
  return { ...s, authenticate: new AuthenticateApiKey(s.applications, s.clock) };
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
