import { EntityManager, LessThanOrEqual } from 'typeorm';
import { Application, ApplicationFilter, ApplicationRepository, Page, PageQuery, pageFromRows, RateLimit } from '@gatehouse/domain';
import { ApplicationEntity } from '../entities/application.entity';
import { TenantEntity } from '../entities/tenant.entity';
import { applyKeysetPage } from './keyset-page';

export class TypeormApplicationRepository extends ApplicationRepository {
  constructor(private readonly em: EntityManager) {
    super();
  }

  private get repo() {
    return this.em.getRepository(ApplicationEntity);
  }

  async insert(app: Application): Promise<void> {
    await this.repo.insert(toRow(app));
  }

  async update(app: Application): Promise<boolean> {
    const { id, tenantId, ...fields } = toRow(app);
    const result = await this.repo.update({ id, tenantId }, fields);
    return (result.affected ?? 0) > 0;
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const result = await this.repo.delete({ id, tenantId });
    return (result.affected ?? 0) > 0;
  }

  async findById(tenantId: string, id: string): Promise<Application | null> {
    return this.findOneWithTenantLimit('a.id = :id AND a.tenant_id = :tenantId', { id, tenantId });
  }

  async findByIdForChange(tenantId: string, id: string): Promise<Application | null> {
    return this.repo.findOne({ where: { id, tenantId }, lock: { mode: 'pessimistic_write' } });
  }

  async findByKeyHash(keyHash: string): Promise<Application | null> {
    return this.findOneWithTenantLimit('(a.key_hash = :keyHash OR a.previous_key_hash = :keyHash)', { keyHash });
  }

  /** The reads authentication uses carry the tenant's default rate limit, so a request needs no second lookup. */
  private async findOneWithTenantLimit(where: string, parameters: Record<string, string>): Promise<Application | null> {
    const { entities, raw } = await this.repo
      .createQueryBuilder('a')
      .leftJoin(TenantEntity, 't', 't.id = a.tenant_id')
      .addSelect('t.default_rate_limit', 'tenant_rate_limit')
      .where(where, parameters)
      .getRawAndEntities<{ tenant_rate_limit: RateLimit | null }>();
    const row = entities[0];
    const tenantRateLimit = raw[0]?.tenant_rate_limit;
    return row && tenantRateLimit ? { ...row, tenantRateLimit } : (row ?? null);
  }

  async findExpired(now: Date, limit: number): Promise<Application[]> {
    return this.repo.find({
      where: { expiresAt: LessThanOrEqual(now) },
      order: { expiresAt: 'ASC' },
      take: limit,
    });
  }

  async list(tenantId: string, filter: ApplicationFilter, page: PageQuery): Promise<Page<Application>> {
    const qb = this.repo.createQueryBuilder('a').where('a.tenant_id = :tenantId', { tenantId });
    if (filter.ids?.length) qb.andWhere('a.id IN (:...ids)', { ids: filter.ids });
    if (filter.types?.length) qb.andWhere('a.type IN (:...types)', { types: filter.types });
    if (filter.unusedSince) qb.andWhere('(a.last_used_at IS NULL OR a.last_used_at < :unusedSince)', { unusedSince: filter.unusedSince });
    const total = page.start === undefined ? await qb.getCount() : undefined;
    const rows = await applyKeysetPage(qb, 'a', page).getMany();
    return pageFromRows(rows, page, total);
  }
}

function toRow(app: Application): ApplicationEntity {
  // tenantRateLimit is the tenant's, read along: not a column of the application.
  const { tenantRateLimit: _tenants, ...own } = app;
  return Object.assign(new ApplicationEntity(), own);
}
