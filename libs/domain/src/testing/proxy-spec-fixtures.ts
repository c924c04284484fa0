/** Fixtures shared by the proxy specs (libs/domain/src/proxies/*.spec.ts): in-memory setup, fakes and inputs. */
import { Application } from '../applications/application';
import { generateApiKey, hashApiKey } from '../applications/api-key';
import { AuthenticateApiKey } from '../applications/authenticate-api-key';
import { ApplicationRepository } from '../applications/application.repository';
import { ApplicationType } from '../applications/permissions';
import { Principal } from '../applications/principal';
import { ValidationError } from '../shared/domain-error';
import { newId } from '../shared/ids';
import { FixedClock, InMemoryApplicationRepository, InMemoryProxyRepository, InMemoryUnitOfWork, RecordingAuditEventPublisher } from '.';
import { DestinationPolicy } from '../proxies/destination-policy';
import { ProxyInput, TransformField } from '../proxies/proxy';
import { CreateProxy, DeleteProxy, PatchProxy, ReplaceProxy } from '../proxies/proxy-commands';
import { GetProxy, ListProxies } from '../proxies/proxy-queries';
import { ResolveProxyForInvocation } from '../proxies/resolve-proxy-for-invocation';
import { ProxyRepository } from '../proxies/proxy.repository';
import { TransformCompiler } from '../proxies/transform-compiler';

/** Refuses literal hosts it was told about; stands in for the IP-range policy of the API. */
export class FakeDestinationPolicy extends DestinationPolicy {
  constructor(
    readonly allowHttp = false,
    private readonly refused = new Set(['127.0.0.1', '[::1]', '10.0.0.1']),
  ) {
    super();
  }

  allowsLiteralHost(hostname: string): boolean {
    return !this.refused.has(hostname);
  }
}

/** "Compiles" by refusing code containing SYNTAX ERROR; remembers what it was given. */
export class FakeCompiler extends TransformCompiler {
  readonly compiled: string[] = [];

  validate(code: string, field: TransformField): void {
    this.compiled.push(code);
    if (code.includes('SYNTAX ERROR')) throw ValidationError.single(`${field}.code`, 'does not compile: SyntaxError (line 1, column 1)');
  }
}

export const CODE = 'module.exports = async (req) => req.args;';

export function setup(policy: DestinationPolicy = new FakeDestinationPolicy()) {
  const clock = new FixedClock('2026-11-21T10:00:00.000Z');
  const applications = new InMemoryApplicationRepository();
  const proxies = new InMemoryProxyRepository();
  const publisher = new RecordingAuditEventPublisher();
  const uow = new InMemoryUnitOfWork(clock, publisher).register(ApplicationRepository, applications).register(ProxyRepository, proxies);
  const compiler = new FakeCompiler();
  return {
    clock,
    applications,
    proxies,
    uow,
    compiler,
    create: new CreateProxy(uow, clock, compiler, policy),
    replace: new ReplaceProxy(uow, clock, compiler, policy),
    patch: new PatchProxy(uow, clock, compiler, policy),
    remove: new DeleteProxy(uow),
    get: new GetProxy(proxies),
    list: new ListProxies(proxies),
    resolve: new ResolveProxyForInvocation(proxies, new AuthenticateApiKey(applications, clock)),
  };
}

export function principal(
  tenantId = newId(),
  permissions: string[] = ['proxy:create', 'proxy:read', 'proxy:update', 'proxy:delete', 'proxy:invoke'],
): Principal {
  return { applicationId: newId(), tenantId, type: 'management', permissions: new Set(permissions), canCreateExpiringApplications: false };
}

export async function anApplication(
  repo: InMemoryApplicationRepository,
  tenantId: string,
  type: ApplicationType,
  permissions: string[] = [],
  canCreateExpiringApplications: boolean | null = null,
) {
  const key = generateApiKey();
  const app: Application = {
    id: newId(),
    tenantId,
    name: type,
    type,
    permissions,
    rules: [],
    keyHash: hashApiKey(key),
    createdBy: null,
    createdAt: new Date('2026-11-21T09:00:00.000Z'),
    modifiedBy: null,
    modifiedAt: null,
    expiresAt: null,
    canCreateExpiringApplications,
    rateLimit: null,
    previousKeyHash: null,
    previousKeyExpiresAt: null,
    lastUsedAt: null,
  };
  await repo.insert(app);
  return { app, key };
}

export const input = (over: Partial<ProxyInput> = {}): ProxyInput => ({ name: 'payments', destinationUrl: 'https://api.example.com/v1', ...over });

export async function validationErrors(promise: Promise<unknown>): Promise<Record<string, string[]>> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).fieldErrors ?? {};
}
