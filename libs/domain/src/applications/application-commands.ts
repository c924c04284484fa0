import { Actor } from '../audit/audit-event';
import { actorOf } from '../audit/actor';
import { Clock } from '../shared/clock';
import { FieldErrorCollector, NotFoundError, PermissionDeniedError, ValidationError } from '../shared/domain-error';
import { newId } from '../shared/ids';
import { TransactionScope, UnitOfWork } from '../shared/unit-of-work';
import { describeRateLimit, RateLimit, validateRateLimit } from '../rate-limits/rate-counter';
import { rateLimitChange } from '../rate-limits/rate-limit-change';
import { generateApiKey, hashApiKey } from './api-key';
import { AccessRule, Application, dedupe, resolveExpiry, validateGrant, validateName } from './application';
import { ApplicationExpiryScheduler } from './application-expiry';
import { ApplicationRepository } from './application.repository';
import { ApplicationType } from './permissions';
import { ActionOnApplication, requireAuthorityOver, requireGrantable } from './authority';
import { Principal, requirePermission } from './principal';

export interface CreateApplicationInput {
  name: string;
  type: ApplicationType;
  permissions?: string[];
  rules?: AccessRule[];
  expiresAt?: Date;
  canCreateExpiringApplications?: boolean | null;
  rateLimit?: RateLimit | null;
}

export interface UpdateApplicationInput {
  name: string;
  permissions?: string[];
  rules?: AccessRule[];
  canCreateExpiringApplications?: boolean | null;
  /** PUT replaces: absent clears it (the tenant's default applies again). */
  rateLimit?: RateLimit | null;
}

/** An application together with the plaintext key, which exists only in this response. */
export interface ApplicationWithKey {
  application: Application;
  key: string;
}

export class CreateApplication {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly clock: Clock,
    private readonly expiry: ApplicationExpiryScheduler,
  ) {}

  async execute(principal: Principal, input: CreateApplicationInput): Promise<ApplicationWithKey> {
    // Held, or can_create_expiring_applications; and not a key on its way out (requireCurrentKeyFor).
    requirePermission(principal, 'application:create');
    // The one exception of CONTRACT.md section 5: private applications may be allowed to mint expiring ones, only.
    if (!principal.permissions.has('application:create') && input.type !== 'expiring') throw new PermissionDeniedError('application:create');
    const now = this.clock.now();
    const errors = new FieldErrorCollector();
    const grant = checkedGrant(input.type, input, errors);
    const expiresAt = resolveExpiry(input.type, input.expiresAt, now, errors);
    errors.throwIfAny();
    requireGrantable(principal, grant);

    const key = generateApiKey();
    const application: Application = {
      id: newId(),
      tenantId: principal.tenantId,
      name: input.name,
      type: input.type,
      ...grant,
      keyHash: hashApiKey(key),
      previousKeyHash: null,
      previousKeyExpiresAt: null,
      lastUsedAt: null,
      createdBy: principal.applicationId,
      createdAt: now,
      modifiedBy: null,
      modifiedAt: null,
      expiresAt,
    };
    await insertApplication(this.uow, application, actorOf(principal));
    if (application.expiresAt) await this.expiry.schedule(application);
    return { application, key };
  }
}

/** The grant a create or update body asks for (and its rate limit), its name and grant checked into `errors`. */
function checkedGrant(type: ApplicationType, input: UpdateApplicationInput, errors: FieldErrorCollector) {
  const grant = {
    permissions: dedupe(input.permissions ?? []),
    rules: input.rules ?? [],
    canCreateExpiringApplications: input.canCreateExpiringApplications ?? null,
    rateLimit: input.rateLimit ?? null,
  };
  validateName(input.name, errors);
  validateGrant(type, grant, errors);
  validateRateLimit(grant.rateLimit, 'rate_limit', errors);
  return grant;
}

/** Shared by CreateApplication and tenant creation: the row and its audit event in one transaction. */
export async function insertApplication(uow: UnitOfWork, application: Application, actor: Actor): Promise<void> {
  await uow.run(async (tx) => {
    await tx.get(ApplicationRepository).insert(application);
    tx.record({
      tenantId: application.tenantId,
      actor,
      entityType: 'application',
      entityId: application.id,
      operation: 'create',
      message: `Application '${application.name}' (${application.type}) created${application.rateLimit ? ` with a rate limit of ${describeRateLimit(application.rateLimit)}` : ''}`,
    });
  });
}

export class UpdateApplication {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly clock: Clock,
  ) {}

  async execute(principal: Principal, id: string, input: UpdateApplicationInput): Promise<Application> {
    // A grant outlives the key that gives it: not one on its way out (requireCurrentKeyFor).
    requirePermission(principal, 'application:update');
    return this.uow.run(async (tx) => {
      // Neither what it holds now (no stripping a stronger application) nor what it would hold may exceed the caller.
      const { repo, current } = await lockedForChange(tx, principal, id, 'update');
      const errors = new FieldErrorCollector();
      const grant = checkedGrant(current.type, input, errors);
      errors.throwIfAny();
      requireGrantable(principal, grant);
      const updated: Application = {
        ...current,
        name: input.name,
        ...grant,
        modifiedBy: principal.applicationId,
        modifiedAt: this.clock.now(),
      };
      await saveUpdate(tx, repo, principal, updated, `Application '${updated.name}' updated${rateLimitChange(current.rateLimit, updated.rateLimit)}`);
      return updated;
    });
  }
}

/** The caller's tenant's application `id`, locked for a change (404 when there is none) that the caller has authority for. */
async function lockedForChange(
  tx: TransactionScope,
  principal: Principal,
  id: string,
  action: ActionOnApplication,
): Promise<{ repo: ApplicationRepository; current: Application }> {
  const repo = tx.get(ApplicationRepository);
  const current = await repo.findByIdForChange(principal.tenantId, id);
  if (!current) throw new NotFoundError('Application');
  requireAuthorityOver(principal, current, action);
  return { repo, current };
}

/** Stores the changed application (404 when it went meanwhile) and records its update. */
async function saveUpdate(tx: TransactionScope, repo: ApplicationRepository, principal: Principal, changed: Application, message: string): Promise<void> {
  if (!(await repo.update(changed))) throw new NotFoundError('Application');
  tx.record({ tenantId: changed.tenantId, actor: actorOf(principal), entityType: 'application', entityId: changed.id, operation: 'update', message });
}

/** The longest a regenerated key's predecessor may keep working (`previous_key_expires_in_seconds`). */
export const MAX_KEY_OVERLAP_SECONDS = 86_400;

export interface RegenerateOptions {
  /** 0 or absent: the previous key stops working at once (the spec's behaviour). */
  previousKeyExpiresInSeconds?: number;
}

/**
 * A new key for the application. With an overlap the key it replaces keeps working until then, so a fleet can roll
 * the new one out; only one previous key is ever kept, so a regenerate during an overlap ends that overlap at once.
 * The previous key never outlives its application: it is refused once the application expires or is deleted.
 */
export class RegenerateApplicationKey {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly clock: Clock,
  ) {}

  async execute(principal: Principal, id: string, options: RegenerateOptions = {}): Promise<ApplicationWithKey> {
    const overlap = options.previousKeyExpiresInSeconds ?? 0;
    if (!Number.isInteger(overlap) || overlap < 0 || overlap > MAX_KEY_OVERLAP_SECONDS) {
      throw ValidationError.single('previous_key_expires_in_seconds', `must be an integer from 0 to ${MAX_KEY_OVERLAP_SECONDS}`);
    }
    // A key on its way out may not mint one (requireCurrentKeyFor): regenerating its own application's would take the
    // rotation back. The permission itself: regenerate is an application:update route, for its own key too.
    requirePermission(principal, 'application:update');
    return this.uow.run(async (tx) => {
      const { repo, current } = await lockedForChange(tx, principal, id, 'regenerate the key of');
      const now = this.clock.now();
      const key = generateApiKey();
      const previousKeyExpiresAt = overlap > 0 ? new Date(Math.min(now.getTime() + overlap * 1000, current.expiresAt?.getTime() ?? Infinity)) : null;
      const application: Application = {
        ...current,
        keyHash: hashApiKey(key),
        previousKeyHash: previousKeyExpiresAt ? current.keyHash : null,
        previousKeyExpiresAt,
        modifiedBy: principal.applicationId,
        modifiedAt: now,
      };
      await saveUpdate(
        tx,
        repo,
        principal,
        application,
        previousKeyExpiresAt
          ? `Application key regenerated; the previous key works until ${previousKeyExpiresAt.toISOString()}`
          : 'Application key regenerated',
      );
      return { application, key };
    });
  }
}

export class DeleteApplication {
  constructor(private readonly uow: UnitOfWork) {}

  async execute(principal: Principal, id: string): Promise<void> {
    await deleteApplication(this.uow, principal.tenantId, id, actorOf(principal), 'deleted', (current) => requireAuthorityOver(principal, current, 'delete'));
  }
}

/** Deletes the application and records it; false when it was already gone (no event then). */
export async function deleteApplication(
  uow: UnitOfWork,
  tenantId: string,
  id: string,
  actor: Actor,
  verb: 'deleted' | 'expired',
  /** Throws when the actor may not delete `current` (an expiry, by the system, passes none). */
  authorize: (current: Application) => void = () => undefined,
): Promise<boolean> {
  return uow.run(async (tx) => {
    const repo = tx.get(ApplicationRepository);
    const current = await repo.findByIdForChange(tenantId, id);
    if (current) authorize(current);
    if (!current || !(await repo.delete(tenantId, id))) {
      if (verb === 'deleted') throw new NotFoundError('Application');
      return false;
    }
    tx.record({
      tenantId,
      actor,
      entityType: 'application',
      entityId: id,
      operation: 'delete',
      message: verb === 'expired' ? `Application '${current.name}' expired and was deleted` : `Application '${current.name}' deleted`,
    });
    return true;
  });
}
