import { ApplicationRepository } from '../applications/application.repository';
import { Principal } from '../applications/principal';
import { ValidationError } from '../shared/domain-error';
import { newId } from '../shared/ids';
import {
  AcceptingCompiler,
  AnyDestinationPolicy,
  FixedClock,
  InMemoryApplicationRepository,
  InMemoryProxyRepository,
  InMemoryUnitOfWork,
  RecordingAuditEventPublisher,
} from '../testing';
import { CreateProxy, PatchProxy, ReplaceProxy } from './proxy-commands';
import { configurationBytes, MAX_CONFIGURATION_BYTES, MAX_TENANT_CONFIGURATION_BYTES } from './proxy-limits';
import { ProxyRepository } from './proxy.repository';

function setup() {
  const clock = new FixedClock();
  const proxies = new InMemoryProxyRepository();
  const uow = new InMemoryUnitOfWork(clock, new RecordingAuditEventPublisher())
    .register(ApplicationRepository, new InMemoryApplicationRepository())
    .register(ProxyRepository, proxies);
  const args = [uow, clock, new AcceptingCompiler(), new AnyDestinationPolicy()] as const;
  return { proxies, create: new CreateProxy(...args), replace: new ReplaceProxy(...args), patch: new PatchProxy(...args) };
}

function admin(tenantId = newId()): Principal {
  return { applicationId: newId(), tenantId, type: 'management', permissions: new Set(['proxy:create', 'proxy:update']), canCreateExpiringApplications: false };
}

/** `entries` values of `valueLength` characters: 100 of 10,000 passed every per-entry rule, about 1 MB. */
function configuration(entries: number, valueLength: number, prefix = 'k'): Record<string, string> {
  return Object.fromEntries(Array.from({ length: entries }, (_, i) => [`${prefix}${i}`, 'v'.repeat(valueLength)]));
}

async function refusal(promise: Promise<unknown>): Promise<string[]> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).fieldErrors?.configuration ?? [];
}

const body = { name: 'p', destinationUrl: 'https://api.example.com' };

describe('what one configuration and one tenant may cost (issue 22 section 3)', () => {
  it('refuses a configuration over 64 KiB (as JSON) that every per-entry rule admits, storing nothing', async () => {
    const s = setup();
    const big = configuration(100, 10_000);
    expect(configurationBytes(big)).toBeGreaterThan(MAX_CONFIGURATION_BYTES);
    expect(await refusal(s.create.execute(admin(), { ...body, configuration: big }))).toEqual([expect.stringMatching(/at most 65536 bytes/)]);
    expect(s.proxies.all()).toEqual([]);
    // Multi-byte characters count as the bytes they are.
    const wide = Object.fromEntries(['a', 'b', 'c', 'd'].map((k) => [k, 'é'.repeat(9_000)]));
    expect(JSON.stringify(wide).length).toBeLessThan(MAX_CONFIGURATION_BYTES);
    expect(await refusal(s.create.execute(admin(), { ...body, configuration: wide }))).toHaveLength(1);
    await expect(s.create.execute(admin(), { ...body, configuration: configuration(6, 10_000) })).resolves.toBeDefined();
  });

  it("refuses a write that takes the tenant's proxies past 4 MiB of configuration; other tenants do not count", async () => {
    const s = setup();
    const caller = admin();
    const near = configuration(6, 10_000);
    const fits = Math.floor(MAX_TENANT_CONFIGURATION_BYTES / configurationBytes(near));
    const made = [];
    for (let i = 0; i < fits; i++) made.push(await s.create.execute(caller, { ...body, configuration: near }));
    const over = await refusal(s.create.execute(caller, { ...body, configuration: near }));
    expect(over).toEqual([expect.stringMatching(/past 4194304 bytes of configuration in all/)]);
    expect(s.proxies.all()).toHaveLength(fits);
    await expect(s.create.execute(admin(), { ...body, configuration: near })).resolves.toBeDefined();
    // A PATCH that grows one is refused; one that replaces its own configuration by one of the same size is not
    // (it is not counted twice), nor a rename, nor a shrink.
    await refusal(s.patch.execute(caller, made[0]!.id, { configuration: { extra: 'v'.repeat(9_000) } }));
    await expect(s.replace.execute(caller, made[0]!.id, { ...body, name: 'renamed', configuration: near })).resolves.toBeDefined();
    await expect(s.patch.execute(caller, made[1]!.id, { configuration: { k0: null } })).resolves.toBeDefined();
    await expect(s.create.execute(caller, { ...body, configuration: { small: 'x' } })).resolves.toBeDefined();
  });
});
