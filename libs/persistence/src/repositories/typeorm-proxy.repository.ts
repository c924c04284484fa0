import { EntityManager } from 'typeorm';
import { Page, PageQuery, pageFromRows, Proxy, ProxyFilter, ProxyRepository, RateLimit } from '@gatehouse/domain';
import { ProxyEntity } from '../entities/proxy.entity';
import { applyKeysetPage } from './keyset-page';

export class TypeormProxyRepository extends ProxyRepository {
  constructor(private readonly em: EntityManager) {
    super();
  }

  private get repo() {
    return this.em.getRepository(ProxyEntity);
  }

  async insert(proxy: Proxy): Promise<void> {
    await this.repo.insert(toRow(proxy));
  }

  async update(proxy: Proxy): Promise<boolean> {
    const { id, tenantId, ...fields } = toRow(proxy);
    const result = await this.repo.update({ id, tenantId }, fields);
    return (result.affected ?? 0) > 0;
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const result = await this.repo.delete({ id, tenantId });
    return (result.affected ?? 0) > 0;
  }

  async findById(tenantId: string, id: string): Promise<Proxy | null> {
    const row = await this.repo.findOneBy({ id, tenantId });
    return row ? toProxy(row) : null;
  }

  async findByKey(key: string): Promise<Proxy | null> {
    // Every invocation runs this: plain SQL on the unique index, without the query builder's per-call work.
    const rows: RawProxyRow[] = await this.em.query(BY_KEY, [key]);
    return rows[0] ? toProxy(fromRaw(rows[0])) : null;
  }

  async list(tenantId: string, filter: ProxyFilter, page: PageQuery): Promise<Page<Proxy>> {
    const qb = this.repo.createQueryBuilder('p').where('p.tenant_id = :tenantId', { tenantId });
    if (filter.ids?.length) qb.andWhere('p.id IN (:...ids)', { ids: filter.ids });
    if (filter.name !== undefined) qb.andWhere(`p.name ILIKE :name ESCAPE '\\'`, { name: namePattern(filter.name) });
    const total = page.start === undefined ? await qb.getCount() : undefined;
    const rows = await applyKeysetPage(qb, 'p', page).getMany();
    return pageFromRows(rows.map(toProxy), page, total);
  }
}

/** The `name` filter as an ILIKE pattern: `*` is the only wildcard, `%`, `_` and `\` match themselves. */
function namePattern(filter: string): string {
  const literal = filter.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%');
  return `%${literal}%`;
}

const BY_KEY = `SELECT "id", "tenant_id", "name", "key", "destination_url", "request_transform_code", "response_transform_code",
  "configuration", "application_id", "require_auth", "rate_limit", "created_by", "created_at", "modified_by", "modified_at"
  FROM "proxies" WHERE "key" = $1`;

interface RawProxyRow {
  id: string;
  tenant_id: string;
  name: string;
  key: string;
  destination_url: string;
  request_transform_code: string | null;
  response_transform_code: string | null;
  configuration: Record<string, string> | null;
  application_id: string | null;
  require_auth: boolean;
  rate_limit: RateLimit | null;
  created_by: string | null;
  created_at: Date;
  modified_by: string | null;
  modified_at: Date | null;
}

function fromRaw(raw: RawProxyRow): ProxyEntity {
  return Object.assign(new ProxyEntity(), {
    id: raw.id,
    tenantId: raw.tenant_id,
    name: raw.name,
    key: raw.key,
    destinationUrl: raw.destination_url,
    requestTransformCode: raw.request_transform_code,
    responseTransformCode: raw.response_transform_code,
    configuration: raw.configuration,
    applicationId: raw.application_id,
    requireAuth: raw.require_auth,
    rateLimit: raw.rate_limit,
    createdBy: raw.created_by,
    createdAt: raw.created_at,
    modifiedBy: raw.modified_by,
    modifiedAt: raw.modified_at,
  });
}

function toRow(proxy: Proxy): ProxyEntity {
  const { requestTransform, responseTransform, ...rest } = proxy;
  return Object.assign(new ProxyEntity(), {
    ...rest,
    requestTransformCode: requestTransform?.code ?? null,
    responseTransformCode: responseTransform?.code ?? null,
  });
}

function toProxy(row: ProxyEntity): Proxy {
  return {
    id: row.id,
    tenantId: row.tenantId,
    name: row.name,
    key: row.key,
    destinationUrl: row.destinationUrl,
    requestTransform: row.requestTransformCode === null ? null : { code: row.requestTransformCode },
    responseTransform: row.responseTransformCode === null ? null : { code: row.responseTransformCode },
    configuration: row.configuration,
    applicationId: row.applicationId,
    requireAuth: row.requireAuth,
    rateLimit: row.rateLimit ?? null,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    modifiedBy: row.modifiedBy,
    modifiedAt: row.modifiedAt,
  };
}
