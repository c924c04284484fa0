import { SYSTEM_ACTOR } from '../audit/audit-event';
import { Clock } from '../shared/clock';
import { ConflictError, FieldErrorCollector, NotFoundError } from '../shared/domain-error';
import { describeRateLimit, RateLimit, validateRateLimit } from '../rate-limits/rate-counter';
import { newId } from '../shared/ids';
import { UnitOfWork } from '../shared/unit-of-work';
import { generateApiKey, hashApiKey } from '../applications/api-key';
import { Application, newApplicationRecord, validateName } from '../applications/application';
import { ApplicationRepository } from '../applications/application.repository';
import { MANAGEMENT_PERMISSIONS } from '../applications/permissions';
import { Tenant } from './tenant';
import { TenantRepository } from './tenant.repository';
import { findTenant } from './tenant-queries';

export interface CreatedTenant {
  tenant: Tenant;
  application: Application;
  key: string;
}

/**
 * A tenant and its first management application, holding every management permission, in one transaction. Its key is
 * generated, or supplied by the operator (the first tenant's BOOTSTRAP_MANAGEMENT_KEY_FILE): only its hash is kept.
 */
export class CreateTenant {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly clock: Clock,
  ) {}

  async execute(name: string, suppliedKey?: string): Promise<CreatedTenant> {
    const errors = new FieldErrorCollector();
    validateName(name, errors);
    errors.throwIfAny();
    const now = this.clock.now();
    const tenant: Tenant = { id: newId(), name, createdAt: now, defaultRateLimit: null };
    const key = suppliedKey ?? generateApiKey();
    const application = managementApplication(tenant, key, now);
    await this.uow.run(async (tx) => {
      const tenants = tx.get(TenantRepository);
      // The unique index refuses a duplicate that races this check; this gives the usual case a message naming it.
      if (await tenants.findByName(name)) throw new ConflictError(`A tenant named '${name}' already exists`);
      await tenants.insert(tenant);
      await tx.get(ApplicationRepository).insert(application);
      const base = { tenantId: tenant.id, actor: SYSTEM_ACTOR, operation: 'create' as const };
      tx.record({ ...base, entityType: 'tenant', entityId: tenant.id, message: `Tenant '${name}' created` });
      tx.record({
        ...base,
        entityType: 'application',
        entityId: application.id,
        message: `Application '${application.name}' (management) created with the tenant`,
      });
    });
    return { tenant, application, key };
  }
}

/** The management application a tenant is created with (and that `tenant rotate-key` recreates when it is gone). */
export function managementApplication(tenant: Tenant, key: string, now: Date): Application {
  return newApplicationRecord({
    id: newId(),
    tenantId: tenant.id,
    name: `${tenant.name} management`,
    type: 'management',
    permissions: [...MANAGEMENT_PERMISSIONS],
    keyHash: hashApiKey(key),
    createdAt: now,
  });
}

export interface RotatedManagementKey {
  tenant: Tenant;
  application: Application;
  key: string;
  /** True when the tenant's own management application was gone and a new one was created. */
  recreated: boolean;
}

/**
 * The operator's recovery path for a tenant that lost its last management key (`gatehouse tenant rotate-key`): the
 * management application the tenant was created with gets a new key and back every management permission, with no
 * rules and no expiry, as it was created; the previous key stops working. When that application was deleted, a new
 * one is created. Either is recorded as done by the system.
 */
export class RotateManagementKey {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly clock: Clock,
  ) {}

  async execute(idOrName: string): Promise<RotatedManagementKey> {
    return this.uow.run(async (tx) => {
      const tenant = await findTenant(tx.get(TenantRepository), idOrName);
      const applications = tx.get(ApplicationRepository);
      const original = await originalManagementApplication(applications, tenant.id);
      const key = generateApiKey();
      const now = this.clock.now();
      const base = { tenantId: tenant.id, actor: SYSTEM_ACTOR, entityType: 'application' };
      if (!original) {
        const application = managementApplication(tenant, key, now);
        await applications.insert(application);
        tx.record({
          ...base,
          entityId: application.id,
          operation: 'create',
          message: `Application '${application.name}' (management) created by an operator to recover the tenant`,
        });
        return { tenant, application, key, recreated: true };
      }
      const application: Application = {
        ...original,
        permissions: [...MANAGEMENT_PERMISSIONS],
        rules: [],
        expiresAt: null,
        keyHash: hashApiKey(key),
        // No overlap for a recovery: a key kept working after an earlier rotation stops too.
        previousKeyHash: null,
        previousKeyExpiresAt: null,
        modifiedBy: null,
        modifiedAt: now,
      };
      await applications.update(application);
      tx.record({ ...base, entityId: application.id, operation: 'update', message: 'Management key rotated by an operator; the previous key no longer works' });
      return { tenant, application, key, recreated: false };
    });
  }
}

/** The management application created with the tenant: the oldest one no application created. */
async function originalManagementApplication(applications: ApplicationRepository, tenantId: string): Promise<Application | undefined> {
  let oldest: Application | undefined;
  for (let page = 1; ; page++) {
    const { items } = await applications.list(tenantId, { types: ['management'] }, { page, size: 100 });
    for (const app of items) if (app.createdBy === null && (!oldest || app.createdAt <= oldest.createdAt)) oldest = app;
    if (items.length < 100) return oldest;
  }
}

/**
 * The operator's tenant-wide default rate limit (CLI `tenant rate-limit`): it applies to every application of the
 * tenant without a rate limit of its own, on every replica from the next request (the change invalidates the
 * application cache like any application change). null removes it.
 */
export class SetTenantRateLimit {
  constructor(private readonly uow: UnitOfWork) {}

  async execute(tenantId: string, limit: RateLimit | null): Promise<void> {
    const errors = new FieldErrorCollector();
    validateRateLimit(limit, 'rate_limit', errors);
    errors.throwIfAny();
    await this.uow.run(async (tx) => {
      const tenants = tx.get(TenantRepository);
      const tenant = await tenants.findById(tenantId);
      if (!tenant || !(await tenants.setDefaultRateLimit(tenantId, limit))) throw new NotFoundError('Tenant');
      tx.record({
        tenantId,
        actor: SYSTEM_ACTOR,
        entityType: 'tenant',
        entityId: tenantId,
        operation: 'update',
        message: `Tenant '${tenant.name}' default rate limit ${limit ? `set to ${describeRateLimit(limit)}` : 'removed'} (was ${describeRateLimit(tenant.defaultRateLimit)})`,
      });
    });
  }
}
