import { EntityManager } from 'typeorm';
import { Tenant, TenantRepository } from '@gatehouse/domain';
import { TenantEntity } from '../entities/tenant.entity';

export class TypeormTenantRepository extends TenantRepository {
  constructor(private readonly em: EntityManager) {
    super();
  }

  async insert(tenant: Tenant): Promise<void> {
    await this.em.getRepository(TenantEntity).insert(tenant);
  }

  count(): Promise<number> {
    return this.em.getRepository(TenantEntity).count();
  }
}
