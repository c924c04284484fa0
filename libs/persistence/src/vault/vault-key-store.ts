import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { KeyWrapper, VaultKeyError } from '@gatehouse/domain';
import { translatingDatabaseErrors } from '../database-errors';
import { ambientTransaction } from '../typeorm-unit-of-work';
import { TtlLru } from './ttl-lru';

/** `data` seals values, `fingerprint` keys a tenant's fingerprints, `lookup` (global, no tenant) keys lookup hashes. */
export type VaultKeyPurpose = 'data' | 'fingerprint' | 'lookup';

export interface VaultKey {
  keyId: string;
  key: Buffer;
}

export interface VaultKeyRow {
  key_id: string;
  tenant_id: string | null;
  purpose: VaultKeyPurpose;
  generation: number;
  wrapped: Buffer;
  kek_id: string;
}

export interface VaultKeyStoreOptions {
  /** Unwrapped keys held in memory at most (least recently used go first). */
  maxKeys?: number;
  /** How long an unwrapped key stays in memory without being read from the database again. */
  keyTtlMs?: number;
  /**
   * How long a process keeps sealing under the key it last read as current: after `vault re-encrypt` makes a new one,
   * every process uses it within this time, and re-encrypt waits this long before retiring the old one.
   */
  currentTtlMs?: number;
}

export const CURRENT_KEY_TTL_MS = 60_000;
const COLUMNS = `"key_id", "tenant_id", "purpose", "generation", "wrapped", "kek_id"`;

/** What binds a wrapped key to its row: a wrapped key copied to another row, tenant or purpose does not unwrap. */
export function wrapContext(row: Pick<VaultKeyRow, 'key_id' | 'tenant_id' | 'purpose'>): string {
  return `gatehouse-vault-key:v1:${row.key_id}:${row.tenant_id ?? 'global'}:${row.purpose}`;
}

/**
 * The vault's data keys: random 256-bit keys, stored only wrapped (table vault_keys), unwrapped in memory in a bounded
 * LRU with a TTL (never in Redis, never logged). A tenant's first key of a purpose is made on first use; two processes
 * making it at once converge on one (unique (tenant, purpose, generation), then a re-read). Reads go through the
 * transaction the caller runs in, if any (see ambientTransaction); a key made inside one is not remembered as current
 * until it is read again, since that transaction may still roll back.
 */
export class VaultKeyStore {
  private readonly byId: TtlLru<{ tenantId: string | null; purpose: VaultKeyPurpose; key: Buffer }>;
  private readonly current: TtlLru<VaultKey>;
  private readonly createdIn = new WeakMap<EntityManager, Set<string>>();

  constructor(
    private readonly dataSource: DataSource,
    readonly wrapper: KeyWrapper,
    options: VaultKeyStoreOptions = {},
  ) {
    this.byId = new TtlLru(options.maxKeys ?? 10_000, options.keyTtlMs ?? 10 * 60_000);
    this.current = new TtlLru(options.maxKeys ?? 10_000, options.currentTtlMs ?? CURRENT_KEY_TTL_MS);
    // Its key reads go to the database (a key's cache entry expires): an outage there is a 503 like any other, not a
    // 500, for every vault built on it (the services', the migrations', the CLI's).
    return translatingDatabaseErrors(this);
  }

  private em(): EntityManager {
    return ambientTransaction.getStore() ?? this.dataSource.manager;
  }

  /** The key new values of this tenant and purpose use: the newest active generation, made on first use. */
  async currentKey(tenantId: string | null, purpose: VaultKeyPurpose): Promise<VaultKey> {
    const cacheKey = `${tenantId ?? 'global'}:${purpose}`;
    const cached = this.current.get(cacheKey);
    if (cached) return cached;
    const em = this.em();
    let row = await this.newest(em, tenantId, purpose);
    if (!row) {
      const created = await this.create(em, tenantId, purpose, 1);
      if (created) {
        if (!inTransaction(em)) this.current.set(cacheKey, created);
        return created;
      }
      row = await this.newest(em, tenantId, purpose);
      if (!row) throw new VaultKeyError(`no ${purpose} key could be made for ${tenantId ?? 'the lookup hash'}`);
    }
    const key = { keyId: row.key_id, key: await this.unwrapRow(row) };
    if (!this.createdIn.get(em)?.has(row.key_id)) this.current.set(cacheKey, key);
    return key;
  }

  /** A key by its id, only if it is this tenant's and of this purpose (so one tenant's envelope never opens as another's). */
  async keyById(tenantId: string | null, keyId: string, purpose: VaultKeyPurpose): Promise<Buffer> {
    const cached = this.byId.get(keyId);
    if (cached && cached.tenantId === tenantId && cached.purpose === purpose) return cached.key;
    const rows: VaultKeyRow[] = await this.em().query(
      `SELECT ${COLUMNS} FROM "vault_keys" WHERE "key_id" = $1 AND "tenant_id" IS NOT DISTINCT FROM $2::uuid AND "purpose" = $3`,
      [keyId, tenantId, purpose],
    );
    if (!rows[0]) throw new VaultKeyError(`the vault key a sealed value names is not one of this tenant's ${purpose} keys`);
    return this.unwrapRow(rows[0]);
  }

  /**
   * A new generation of the tenant's key (`vault re-encrypt`); the older ones stay active (they open what they
   * sealed) until re-encrypt retires them. Two rotations at once converge on one new key.
   */
  async rotate(tenantId: string, purpose: VaultKeyPurpose): Promise<VaultKey> {
    const em = this.dataSource.manager;
    const newest = await this.newest(em, tenantId, purpose);
    const created = await this.create(em, tenantId, purpose, (newest?.generation ?? 0) + 1);
    this.current.clear();
    return created ?? this.currentKey(tenantId, purpose);
  }

  /** Forgets every unwrapped key (tests, and after a rotation in this process). */
  forget(): void {
    this.byId.clear();
    this.current.clear();
  }

  async unwrapRow(row: VaultKeyRow): Promise<Buffer> {
    const key = await this.wrapper.unwrap({ kekId: row.kek_id, wrapped: row.wrapped }, wrapContext(row));
    this.byId.set(row.key_id, { tenantId: row.tenant_id, purpose: row.purpose, key });
    return key;
  }

  private async newest(em: EntityManager, tenantId: string | null, purpose: VaultKeyPurpose): Promise<VaultKeyRow | undefined> {
    const rows: VaultKeyRow[] = await em.query(
      `SELECT ${COLUMNS} FROM "vault_keys" WHERE "tenant_id" IS NOT DISTINCT FROM $1::uuid AND "purpose" = $2 AND "state" = 'active'
       ORDER BY "generation" DESC LIMIT 1`,
      [tenantId, purpose],
    );
    return rows[0];
  }

  /** Inserts a new key unless that generation exists already (another process made it first): then undefined. */
  private async create(em: EntityManager, tenantId: string | null, purpose: VaultKeyPurpose, generation: number): Promise<VaultKey | undefined> {
    const keyId = randomUUID();
    const key = randomBytes(32);
    const { kekId, wrapped } = await this.wrapper.wrap(key, wrapContext({ key_id: keyId, tenant_id: tenantId, purpose }));
    const inserted: unknown[] = await em.query(
      `INSERT INTO "vault_keys" ("key_id", "tenant_id", "purpose", "generation", "wrapped", "kek_id", "state", "created_at")
       VALUES ($1, $2, $3, $4, $5, $6, 'active', now()) ON CONFLICT DO NOTHING RETURNING "key_id"`,
      [keyId, tenantId, purpose, generation, wrapped, kekId],
    );
    if (inserted.length === 0) return undefined;
    if (inTransaction(em)) {
      const created = this.createdIn.get(em) ?? new Set<string>();
      created.add(keyId);
      this.createdIn.set(em, created);
    }
    this.byId.set(keyId, { tenantId, purpose, key });
    return { keyId, key };
  }
}

function inTransaction(em: EntityManager): boolean {
  return em.queryRunner?.isTransactionActive === true;
}
