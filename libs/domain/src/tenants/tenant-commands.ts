import { SYSTEM_ACTOR } from '../audit/audit-event';
import { Clock } from '../shared/clock';
import { FieldErrorCollector, NotFoundError } from '../shared/domain-error';
import { describeRateLimit, RateLimit, validateRateLimit } from '../rate-limits/rate-counter';
import { newId } from '../shared/ids';
import { UnitOfWork } from '../shared/unit-of-work';
import { generateApiKey, hashApiKey } from '../applications/api-key';
import { Application, validateName } from '../applications/application';
import { ApplicationRepository } from '../applications/application.repository';
import { MANAGEMENT_PERMISSIONS } from '../applications/permissions';
import { Tenant } from './tenant';
import { TenantRepository } from './tenant.repository';

export interface CreatedTenant {
  tenant: Tenant;
  application: Application;
  key: string;
}

/** A tenant and its first management application, holding every management permission, in one transaction. */
export class CreateTenant {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly clock: Clock,
  ) {}

  async execute(name: string): Promise<CreatedTenant> {
    const errors = new FieldErrorCollector();
    validateName(name, errors);
    errors.throwIfAny();
    const now = this.clock.now();
    const tenant: Tenant = { id: newId(), name, createdAt: now, defaultRateLimit: null };
    const key = generateApiKey();
    const application: Application = {
      id: newId(),
      tenantId: tenant.id,
      name: `${name} management`,
      type: 'management',
      permissions: [...MANAGEMENT_PERMISSIONS],
      rules: [],
      keyHash: hashApiKey(key),
      createdBy: null,
      createdAt: now,
      modifiedBy: null,
      modifiedAt: null,
      expiresAt: null,
      canCreateExpiringApplications: null,
      rateLimit: null,
      previousKeyHash: null,
      previousKeyExpiresAt: null,
      lastUsedAt: null,
    };
    await this.uow.run(async (tx) => {
      await tx.get(TenantRepository).insert(tenant);
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
