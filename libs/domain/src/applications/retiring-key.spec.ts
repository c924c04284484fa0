import { AcceptingCompiler, AnyDestinationPolicy, inMemoryPorts, InMemoryProxyRepository } from '../testing';
import { EscalationError } from '../shared/domain-error';
import { CreateTenant } from '../tenants/tenant-commands';
import { CreateProxy, DeleteProxy, PatchProxy, ReplaceProxy } from '../proxies/proxy-commands';
import { ProxyRepository } from '../proxies/proxy.repository';
import { CreateApplication, DeleteApplication, RegenerateApplicationKey, UpdateApplication } from './application-commands';
import { AuthenticateApiKey } from './authenticate-api-key';
import { PERMISSIONS } from './permissions';
import { LASTING_PERMISSIONS, Principal, principalOf, requirePermission } from './principal';

/**
 * A key on its way out (the previous key of a regenerate, during its overlap) may finish its work but leave no
 * authority behind: one rule, LASTING_PERMISSIONS checked with every permission, and every use case that writes
 * such authority refuses it before changing anything.
 */
async function setup() {
  const ports = inMemoryPorts();
  const proxies = new InMemoryProxyRepository();
  ports.uow.register(ProxyRepository, proxies);
  const { application: adminApp, key: adminKey } = await new CreateTenant(ports.uow, ports.clock).execute('acme');
  const admin = principalOf(adminApp);
  const regenerate = new RegenerateApplicationKey(ports.uow, ports.clock);
  const { key: fresh } = await regenerate.execute(admin, adminApp.id, { previousKeyExpiresInSeconds: 600 });
  const authenticate = new AuthenticateApiKey(ports.applications, ports.clock);
  const retiring = (await authenticate.execute(adminKey)).principal;
  const current = (await authenticate.execute(fresh)).principal;
  const policy = new AnyDestinationPolicy();
  const createApp = new CreateApplication(ports.uow, ports.clock, ports.expiry);
  const { application: target } = await createApp.execute(current, { name: 'backend', type: 'private', permissions: ['token:read'] });
  const proxy = await new CreateProxy(ports.uow, ports.clock, new AcceptingCompiler(), policy).execute(current, {
    name: 'payments',
    destinationUrl: 'https://api.example.com',
  });
  ports.uow.events.length = 0;
  return {
    ...ports,
    proxies,
    retiring,
    current,
    target,
    proxy,
    adminApp,
    createApp,
    regenerate,
    update: new UpdateApplication(ports.uow, ports.clock),
    removeApp: new DeleteApplication(ports.uow),
    createProxy: new CreateProxy(ports.uow, ports.clock, new AcceptingCompiler(), policy),
    replace: new ReplaceProxy(ports.uow, ports.clock, new AcceptingCompiler(), policy),
    patch: new PatchProxy(ports.uow, ports.clock, new AcceptingCompiler(), policy),
    removeProxy: new DeleteProxy(ports.uow),
  };
}

type Setup = Awaited<ReturnType<typeof setup>>;

const OPEN_AND_RECODE = { requireAuth: false, requestTransform: { code: 'module.exports = async (req) => req.args' } };

describe('a key on its way out leaves no authority behind', () => {
  it('is told apart by authentication: the previous key during its overlap, not the current one', async () => {
    const s = await setup();
    expect(s.retiring.viaPreviousKey).toBe(true);
    expect(s.current.viaPreviousKey).toBeUndefined();
  });

  it('is refused exactly the permissions that leave authority behind, every other one it holds working', () => {
    const retiring: Principal = {
      applicationId: 'a',
      tenantId: 't',
      type: 'management',
      permissions: new Set(PERMISSIONS.map((p) => p.type)),
      canCreateExpiringApplications: false,
      viaPreviousKey: true,
    };
    expect([...LASTING_PERMISSIONS].sort()).toEqual([
      'application:create',
      'application:update',
      'log:stream',
      'proxy:create',
      'proxy:update',
      'tenant:update',
    ]);
    for (const { type } of PERMISSIONS) {
      if (LASTING_PERMISSIONS.has(type)) expect(() => requirePermission(retiring, type)).toThrow(EscalationError);
      else expect(() => requirePermission(retiring, type)).not.toThrow();
      expect(() => requirePermission({ ...retiring, viaPreviousKey: false }, type)).not.toThrow();
    }
    // A private application's expiring-application minting is application:create too.
    const minter: Principal = { ...retiring, type: 'private', permissions: new Set(), canCreateExpiringApplications: true };
    expect(() => requirePermission(minter, 'application:create')).toThrow(/previous key/);
  });

  const refused: [string, (s: Setup) => Promise<unknown>][] = [
    ['create an application', (s) => s.createApp.execute(s.retiring, { name: 'persist', type: 'management', permissions: ['application:read'] })],
    ['create an expiring application', (s) => s.createApp.execute(s.retiring, { name: 'persist', type: 'expiring', permissions: ['token:read'] })],
    [
      'grant another application more',
      (s) => s.update.execute(s.retiring, s.target.id, { name: 'backend', permissions: ['token:read'], canCreateExpiringApplications: true }),
    ],
    ['rename its own application', (s) => s.update.execute(s.retiring, s.adminApp.id, { name: 'renamed', permissions: [...s.adminApp.permissions] })],
    ['regenerate its own key', (s) => s.regenerate.execute(s.retiring, s.adminApp.id)],
    ['regenerate another key', (s) => s.regenerate.execute(s.retiring, s.target.id, { previousKeyExpiresInSeconds: 60 })],
    ['create a proxy', (s) => s.createProxy.execute(s.retiring, { name: 'persist', destinationUrl: 'https://evil.example.com' })],
    [
      'open and recode a proxy (PUT)',
      (s) => s.replace.execute(s.retiring, s.proxy.id, { name: 'payments', destinationUrl: 'https://api.example.com', ...OPEN_AND_RECODE }),
    ],
    ['bind a proxy to an application (PATCH)', (s) => s.patch.execute(s.retiring, s.proxy.id, { applicationId: s.target.id })],
    ['reconfigure a proxy (PATCH)', (s) => s.patch.execute(s.retiring, s.proxy.id, { configuration: { secret: 'x' } })],
    ['send a proxy elsewhere (PATCH)', (s) => s.patch.execute(s.retiring, s.proxy.id, { destinationUrl: 'https://evil.example.com' })],
    ['read a proxy back through an empty PATCH', (s) => s.patch.execute(s.retiring, s.proxy.id, {})],
  ];

  it.each(refused)('may not %s, and nothing changes', async (_, act) => {
    const s = await setup();
    const applications = s.applications.all();
    const proxies = s.proxies.all();
    await expect(act(s)).rejects.toThrow(EscalationError);
    await expect(act(s)).rejects.toThrow(/previous key of a regenerated application/);
    expect(s.applications.all()).toEqual(applications);
    expect(s.proxies.all()).toEqual(proxies);
    expect(s.uow.events).toEqual([]);
  });

  it.each(refused)('the current key may %s', async (_, act) => {
    const s = await setup();
    await expect(act({ ...s, retiring: s.current })).resolves.toBeDefined();
  });

  it('may still finish its work: delete a proxy or an application', async () => {
    const s = await setup();
    await s.removeProxy.execute(s.retiring, s.proxy.id);
    await s.removeApp.execute(s.retiring, s.target.id);
    expect(s.proxies.all()).toEqual([]);
    expect(s.uow.events.map((e) => e.operation)).toEqual(['delete', 'delete']);
  });
});
