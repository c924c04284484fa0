import { timingSafeEqual } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { Page, PageQuery, pageFromRows, Proxy, ProxyFilter, ProxyRepository, RateLimit, stringMap, VaultCrypto } from '@gatehouse/domain';
import { ProxyEntity } from '../entities/proxy.entity';
import { proxyConfigurationAad, proxyKeyAad } from '../vault/sealed-columns';
import { applyKeysetPage } from './keyset-page';

/**
 * Proxies with their secrets sealed by the vault: the key is stored as its lookup hash (how an invocation finds the
 * proxy) and a sealed copy (what its readers are shown), the configuration as sealed JSON. Neither is ever in the
 * database in plaintext.
 */
export class TypeormProxyRepository extends ProxyRepository {
  constructor(
    private readonly em: EntityManager,
    private readonly vault: VaultCrypto,
  ) {
    super();
  }

  private get repo() {
    return this.em.getRepository(ProxyEntity);
  }

  async insert(proxy: Proxy): Promise<void> {
    await this.repo.insert(await this.toRow(proxy));
  }

  async update(proxy: Proxy): Promise<boolean> {
    const { id, tenantId, ...fields } = await this.toRow(proxy);
    const result = await this.repo.update({ id, tenantId }, fields);
    return (result.affected ?? 0) > 0;
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const result = await this.repo.delete({ id, tenantId });
    return (result.affected ?? 0) > 0;
  }

  async findById(tenantId: string, id: string): Promise<Proxy | null> {
    const row = await this.repo.findOneBy({ id, tenantId });
    return row ? this.toProxy(row) : null;
  }

  async findByKey(key: string): Promise<Proxy | null> {
    // Every invocation runs this: plain SQL on the unique index, without the query builder's per-call work.
    const rows: RawProxyRow[] = await this.em.query(BY_KEY_HASH, [await this.vault.lookupHash(key)]);
    if (!rows[0]) return null;
    const proxy = await this.toProxy(fromRaw(rows[0]));
    // The hash matched; the sealed copy must be the very key too (a hash collision, or a row tampered with).
    return sameKey(proxy.key, key) ? proxy : null;
  }

  async list(tenantId: string, filter: ProxyFilter, page: PageQuery): Promise<Page<Proxy>> {
    const qb = this.repo.createQueryBuilder('p').where('p.tenant_id = :tenantId', { tenantId });
    if (filter.ids?.length) qb.andWhere('p.id IN (:...ids)', { ids: filter.ids });
    if (filter.name !== undefined) qb.andWhere(`p.name ILIKE :name ESCAPE '\\'`, { name: namePattern(filter.name) });
    const total = page.start === undefined ? await qb.getCount() : undefined;
    const rows = await applyKeysetPage(qb, 'p', page).getMany();
    return pageFromRows(await Promise.all(rows.map((row) => this.toProxy(row))), page, total);
  }

  async configurationBytes(tenantId: string, exceptId?: string): Promise<number> {
    const rows: { bytes: string }[] = await this.em.query(CONFIGURATION_BYTES, [tenantId, exceptId ?? null]);
    return Number(rows[0]?.bytes ?? 0);
  }

  private async toRow(proxy: Proxy): Promise<ProxyEntity> {
    const { requestTransform, responseTransform, key, configuration, ...rest } = proxy;
    const { tenantId, id } = proxy;
    return Object.assign(new ProxyEntity(), {
      ...rest,
      keyHash: await this.vault.lookupHash(key),
      keySealed: await this.vault.seal(tenantId, Buffer.from(key), proxyKeyAad(tenantId, id)),
      configurationSealed:
        configuration == null ? null : await this.vault.seal(tenantId, Buffer.from(JSON.stringify(configuration)), proxyConfigurationAad(tenantId, id)),
      requestTransformCode: requestTransform?.code ?? null,
      responseTransformCode: responseTransform?.code ?? null,
    });
  }

  private async toProxy(row: ProxyEntity): Promise<Proxy> {
    const key = (await this.vault.open(row.tenantId, row.keySealed, proxyKeyAad(row.tenantId, row.id))).toString();
    const configuration =
      row.configurationSealed === null
        ? null
        : stringMap(
            Object.entries(
              JSON.parse((await this.vault.open(row.tenantId, row.configurationSealed, proxyConfigurationAad(row.tenantId, row.id))).toString()) as Record<
                string,
                string
              >,
            ),
          );
    return {
      id: row.id,
      tenantId: row.tenantId,
      name: row.name,
      key,
      destinationUrl: row.destinationUrl,
      requestTransform: row.requestTransformCode === null ? null : { code: row.requestTransformCode },
      responseTransform: row.responseTransformCode === null ? null : { code: row.responseTransformCode },
      configuration,
      applicationId: row.applicationId,
      requireAuth: row.requireAuth,
      rateLimit: row.rateLimit ?? null,
      createdBy: row.createdBy,
      createdAt: row.createdAt,
      modifiedBy: row.modifiedBy,
      modifiedAt: row.modifiedAt,
    };
  }
}

function sameKey(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Sealed, each configuration is its compact JSON and the envelope's few dozen bytes: the tenant limit errs safe. */
const CONFIGURATION_BYTES = `SELECT coalesce(sum(octet_length("configuration_sealed")), 0)::bigint AS bytes
  FROM "proxies" WHERE "tenant_id" = $1 AND ($2::uuid IS NULL OR "id" <> $2::uuid)`;

/** The `name` filter as an ILIKE pattern: `*` is the only wildcard, `%`, `_` and `\` match themselves. */
function namePattern(filter: string): string {
  const literal = filter.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%');
  return `%${literal}%`;
}

const BY_KEY_HASH = `SELECT "id", "tenant_id", "name", "key_hash", "key_sealed", "destination_url", "request_transform_code",
  "response_transform_code", "configuration_sealed", "application_id", "require_auth", "rate_limit", "created_by", "created_at",
  "modified_by", "modified_at"
  FROM "proxies" WHERE "key_hash" = $1`;

interface RawProxyRow {
  id: string;
  tenant_id: string;
  name: string;
  key_hash: string;
  key_sealed: Buffer;
  destination_url: string;
  request_transform_code: string | null;
  response_transform_code: string | null;
  configuration_sealed: Buffer | null;
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
    keyHash: raw.key_hash,
    keySealed: raw.key_sealed,
    destinationUrl: raw.destination_url,
    requestTransformCode: raw.request_transform_code,
    responseTransformCode: raw.response_transform_code,
    configurationSealed: raw.configuration_sealed,
    applicationId: raw.application_id,
    requireAuth: raw.require_auth,
    rateLimit: raw.rate_limit,
    createdBy: raw.created_by,
    createdAt: raw.created_at,
    modifiedBy: raw.modified_by,
    modifiedAt: raw.modified_at,
  });
}
