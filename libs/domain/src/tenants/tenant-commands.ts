import { SYSTEM_ACTOR } from '../audit/audit-event';
import { Clock } from '../shared/clock';
import { FieldErrorCollector } from '../shared/domain-error';
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
    const tenant: Tenant = { id: newId(), name, createdAt: now };
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
