import { generateApiKey } from '../applications/api-key';
import { AuthenticateApiKey } from '../applications/authenticate-api-key';
import { AuthenticationThrottle } from '../rate-limits/authentication-throttle';
import { InMemoryRateCounter } from '../rate-limits/rate-counter';
import { newId } from '../shared/ids';
import { ResolveProxyForInvocation } from './resolve-proxy-for-invocation';
import { anApplication, input, principal, setup } from '../testing/proxy-spec-fixtures';

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
