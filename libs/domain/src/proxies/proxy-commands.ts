import { actorOf } from '../audit/actor';
import { rateLimitChange } from '../rate-limits/rate-limit-change';
import { Application } from '../applications/application';
import { describeRateLimit } from '../rate-limits/rate-counter';
import { ApplicationRepository } from '../applications/application.repository';
import { rateLimitWithin, requireAuthorityOver } from '../applications/authority';
import { Principal, requirePermission } from '../applications/principal';
import { Clock } from '../shared/clock';
import { EscalationError, FieldErrorCollector, NotFoundError, ValidationError } from '../shared/domain-error';
import { newId, UUID_PATTERN } from '../shared/ids';
import { TransactionScope, UnitOfWork } from '../shared/unit-of-work';
import { DestinationPolicy } from './destination-policy';
import { applyProxyPatch, generateProxyKey, inputOf, Proxy, ProxyInput, ProxyPatch, ProxyTransform, TransformField, validateProxyInput } from './proxy';
import { ProxyRepository } from './proxy.repository';
import { checkConfigurationCost } from './proxy-limits';
import { TransformCompiler } from './transform-compiler';

/** Everything a create, replace and patch check, reported at once; `previous` spares recompiling unchanged code. */
class ProxyValidator {
  constructor(
    private readonly compiler: TransformCompiler,
    private readonly policy: DestinationPolicy,
  ) {}

  async check(tx: TransactionScope, principal: Principal, input: ProxyInput, previous?: { id: string; input: ProxyInput }): Promise<void> {
    const errors = new FieldErrorCollector();
    validateProxyInput(input, this.policy, errors);
    if (errors.isEmpty) {
      await checkConfigurationCost(tx, principal.tenantId, input.configuration, previous?.input.configuration, previous?.id, errors);
    }
    const application = await this.checkApplication(tx, principal.tenantId, input.applicationId, errors);
    this.compile(input.requestTransform, previous?.input.requestTransform, 'request_transform', errors);
    this.compile(input.responseTransform, previous?.input.responseTransform, 'response_transform', errors);
    errors.throwIfAny();
    // Whoever writes a proxy bound to an application decides what its transforms do through `svc` as that
    // application (a change of code, destination or configuration as much as the binding itself), so every write
    // that leaves a proxy bound needs authority over the application, as an update of it would.
    if (application) requireAuthorityOver(principal, application, 'bind a proxy to');
    requireMayOpen(principal, input, previous?.input);
  }

  private async checkApplication(
    tx: TransactionScope,
    tenantId: string,
    applicationId: string | null | undefined,
    errors: FieldErrorCollector,
  ): Promise<Application | undefined> {
    if (applicationId == null) return undefined;
    if (typeof applicationId !== 'string' || !UUID_PATTERN.test(applicationId)) {
      errors.add('application.id', 'must be a UUID');
      return undefined;
    }
    // Another tenant's application reads as absent, so this answer leaks nothing about other tenants.
    const application = await tx.get(ApplicationRepository).findById(tenantId, applicationId.toLowerCase());
    if (!application || (application.type !== 'public' && application.type !== 'private')) {
      errors.add('application.id', 'must be a public or private application of this tenant');
      return undefined;
    }
    return application;
  }

  private compile(
    transform: ProxyTransform | null | undefined,
    previous: ProxyTransform | null | undefined,
    field: TransformField,
    errors: FieldErrorCollector,
  ): void {
    if (typeof transform?.code !== 'string' || transform.code === previous?.code) return;
    try {
      this.compiler.validate(transform.code, field);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      for (const [path, messages] of Object.entries(error.fieldErrors ?? {})) messages.forEach((m) => errors.add(path, m));
    }
  }
}

function proxyFields(
  input: ProxyInput,
): Pick<Proxy, 'name' | 'destinationUrl' | 'requestTransform' | 'responseTransform' | 'applicationId' | 'configuration' | 'requireAuth' | 'rateLimit'> {
  return {
    name: input.name,
    destinationUrl: input.destinationUrl,
    requestTransform: input.requestTransform ? { code: input.requestTransform.code } : null,
    responseTransform: input.responseTransform ? { code: input.responseTransform.code } : null,
    applicationId: input.applicationId ? input.applicationId.toLowerCase() : null,
    configuration: input.configuration ?? null,
    requireAuth: input.requireAuth ?? true,
    rateLimit: input.rateLimit ? { limit: input.rateLimit.limit, windowSeconds: input.rateLimit.windowSeconds } : null,
  };
}

/** What create, replace and patch share: the unit of work, the clock, the rules, and the update itself. */
abstract class ProxyCommand {
  protected readonly validator: ProxyValidator;

  constructor(
    protected readonly uow: UnitOfWork,
    protected readonly clock: Clock,
    compiler: TransformCompiler,
    policy: DestinationPolicy,
  ) {
    this.validator = new ProxyValidator(compiler, policy);
  }

  /** Loads the proxy (404 when absent), checks the input made from its current fields against every rule, saves it. */
  protected async update(principal: Principal, id: string, inputFor: (current: ProxyInput) => ProxyInput): Promise<Proxy> {
    // Also refuses a key on its way out: every field of a proxy decides what its key does after the key is gone.
    requirePermission(principal, 'proxy:update');
    return this.uow.run(async (tx) => {
      const current = await tx.get(ProxyRepository).findById(principal.tenantId, id);
      if (!current) throw new NotFoundError('Proxy');
      const previous = inputOf(current);
      const input = inputFor(previous);
      await this.validator.check(tx, principal, input, { id: current.id, input: previous });
      const updated: Proxy = { ...current, ...proxyFields(input), modifiedBy: principal.applicationId, modifiedAt: this.clock.now() };
      if (!(await tx.get(ProxyRepository).update(updated))) throw new NotFoundError('Proxy');
      recordProxyChange(tx, principal, updated, 'update', rateLimitChange(current.rateLimit, updated.rateLimit));
      return updated;
    });
  }
}

const PAST_TENSE = { create: 'created', update: 'updated', delete: 'deleted' } as const;

/** The audit event of a committed change to a proxy. */
function recordProxyChange(tx: TransactionScope, principal: Principal, proxy: Proxy, operation: keyof typeof PAST_TENSE, detail = ''): void {
  tx.record({
    tenantId: proxy.tenantId,
    actor: actorOf(principal),
    entityType: 'proxy',
    entityId: proxy.id,
    operation,
    message: `Proxy '${proxy.name}' ${PAST_TENSE[operation]}${detail}`,
  });
}

export class CreateProxy extends ProxyCommand {
  async execute(principal: Principal, input: ProxyInput): Promise<Proxy> {
    // Also refuses a key on its way out: a proxy has a key of its own.
    requirePermission(principal, 'proxy:create');
    return this.uow.run(async (tx) => {
      await this.validator.check(tx, principal, input);
      const now = this.clock.now();
      const proxy: Proxy = {
        id: newId(),
        tenantId: principal.tenantId,
        key: generateProxyKey(),
        ...proxyFields(input),
        createdBy: principal.applicationId,
        createdAt: now,
        modifiedBy: principal.applicationId,
        modifiedAt: now,
      };
      await tx.get(ProxyRepository).insert(proxy);
      recordProxyChange(tx, principal, proxy, 'create', proxy.rateLimit ? ` with a rate limit of ${describeRateLimit(proxy.rateLimit)}` : '');
      return proxy;
    });
  }
}

/** PUT: the body replaces the proxy; optional fields it omits return to their defaults. */
export class ReplaceProxy extends ProxyCommand {
  execute(principal: Principal, id: string, input: ProxyInput): Promise<Proxy> {
    return this.update(principal, id, () => input);
  }
}

/** PATCH (RFC 7396): the merged result must pass the same rules as a PUT body. */
export class PatchProxy extends ProxyCommand {
  execute(principal: Principal, id: string, patch: ProxyPatch): Promise<Proxy> {
    return this.update(principal, id, (current) => applyProxyPatch(current, patch));
  }
}

export class DeleteProxy {
  constructor(private readonly uow: UnitOfWork) {}

  async execute(principal: Principal, id: string): Promise<void> {
    await this.uow.run(async (tx) => {
      const repo = tx.get(ProxyRepository);
      const current = await repo.findById(principal.tenantId, id);
      if (!current || !(await repo.delete(principal.tenantId, id))) throw new NotFoundError('Proxy');
      recordProxyChange(tx, principal, current, 'delete');
    });
  }
}

/**
 * A proxy with `require_auth` false may be invoked by anyone holding its proxy key, with no key of their own, so no
 * permission and no application rate limit applies to its callers: making a proxy open hands out proxy:invoke, at the
 * proxy's own rate. So the write that opens a proxy, or loosens an open proxy's rate limit, needs proxy:invoke and a
 * proxy rate limit within the writer's own (or its tenant's default); otherwise a key that may not invoke, or may
 * only invoke slowly, would invoke through it without limit. A write that leaves an open proxy no more open than it
 * was (a rename, a new destination) needs neither.
 */
function requireMayOpen(principal: Principal, input: ProxyInput, previous: ProxyInput | undefined): void {
  if (input.requireAuth !== false) return;
  const rateLimit = input.rateLimit ?? null;
  if (previous?.requireAuth === false && rateLimitWithin(rateLimit, previous.rateLimit ?? null)) return;
  if (!principal.permissions.has('proxy:invoke')) {
    throw new EscalationError('This application may not open a proxy to callers without a key (require_auth false): it lacks proxy:invoke');
  }
  const own = principal.rateLimit ?? null;
  if (!rateLimitWithin(rateLimit, own)) {
    throw new EscalationError(
      `This application may not open a proxy to callers without a key (require_auth false) with ${rateLimit ? `a rate limit of ${describeRateLimit(rateLimit)}` : 'no rate limit'}, looser than this application's own (${describeRateLimit(own)})`,
    );
  }
}
