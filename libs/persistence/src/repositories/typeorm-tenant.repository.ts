import { EntityManager } from 'typeorm';
import { RateLimit, Tenant, TenantRepository } from '@gatehouse/domain';
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

  findById(id: string): Promise<Tenant | null> {
    return this.em.getRepository(TenantEntity).findOneBy({ id });
  }

  findByName(name: string): Promise<Tenant | null> {
    return this.em.getRepository(TenantEntity).findOneBy({ name });
  }

  list(): Promise<Tenant[]> {
    return this.em.getRepository(TenantEntity).find({ order: { createdAt: 'ASC', id: 'ASC' } });
  }

  async setDefaultRateLimit(id: string, limit: RateLimit | null): Promise<boolean> {
    const result = await this.em.getRepository(TenantEntity).update({ id }, { defaultRateLimit: limit });
    return (result.affected ?? 0) > 0;
  }

  async setLogRetention(id: string, days: number | null): Promise<boolean> {
    const result = await this.em.getRepository(TenantEntity).update({ id }, { logRetentionDays: days });
    return (result.affected ?? 0) > 0;
  }
}
