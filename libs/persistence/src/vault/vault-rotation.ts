import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { DatabaseVaultCrypto, envelopeHeader, envelopeKeyId } from './database-vault-crypto';
import { SEALED_COLUMNS, SealedColumn } from './sealed-columns';
import { CURRENT_KEY_TTL_MS, VaultKeyRow, wrapContext } from './vault-key-store';

export type Progress = (line: string) => void;

export interface VaultRotationOptions {
  batchSize?: number;
  /**
   * How long after a tenant's new data key was made its older keys may be retired: every process must have stopped
   * sealing under them (VaultKeyStore's currentTtlMs, plus a margin).
   */
  retireAfterMs?: number;
  columns?: SealedColumn[];
}

export interface VaultStatus {
  kekId: string;
  /** How many keys (every purpose and state) each key-encryption key wraps. */
  keysByKek: Record<string, number>;
  dataKeys: { active: number; retired: number };
  /** Tenants with more than one active data key: a re-encrypt to finish (`--resume`). */
  tenantsReEncrypting: number;
}

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * `gatehouse vault rotate-key` and `gatehouse vault re-encrypt`: online (services keep sealing and opening throughout),
 * resumable (each step commits on its own and a rerun continues from what is left), in bounded batches.
 */
export class VaultRotation {
  private readonly batchSize: number;
  private readonly retireAfterMs: number;
  private readonly columns: SealedColumn[];

  constructor(
    private readonly dataSource: DataSource,
    private readonly vault: DatabaseVaultCrypto,
    options: VaultRotationOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 200;
    this.retireAfterMs = options.retireAfterMs ?? CURRENT_KEY_TTL_MS + 5_000;
    this.columns = options.columns ?? SEALED_COLUMNS;
  }

  private get keys() {
    return this.vault.keys;
  }

  async status(): Promise<VaultStatus> {
    const kekId = await this.keys.wrapper.currentKekId();
    const byKek: { kek_id: string; n: number }[] = await this.dataSource.query(`SELECT "kek_id", count(*)::int AS n FROM "vault_keys" GROUP BY 1 ORDER BY 1`);
    const [data] = await this.dataSource.query(
      `SELECT count(*) FILTER (WHERE "state" = 'active')::int AS active, count(*) FILTER (WHERE "state" = 'retired')::int AS retired FROM "vault_keys" WHERE "purpose" = 'data'`,
    );
    return {
      kekId,
      keysByKek: Object.fromEntries(byKek.map((r) => [r.kek_id, r.n])),
      dataKeys: { active: data.active, retired: data.retired },
      tenantsReEncrypting: (await this.tenantsReEncrypting()).length,
    };
  }

  /**
   * Re-wraps every key that another key-encryption key wraps under the current one, a key at a time: each update
   * replaces one wrapped copy atomically, and the data key inside is the same, so every value stays readable by
   * every process that holds either KEK.
   */
  async rewrapKeys(progress: Progress = () => undefined): Promise<{ kekId: string; rewrapped: number }> {
    const kekId = await this.keys.wrapper.currentKekId();
    const [{ n: total }] = await this.dataSource.query(`SELECT count(*)::int AS n FROM "vault_keys" WHERE "kek_id" <> $1`, [kekId]);
    let done = 0;
    for (let after = '00000000-0000-0000-0000-000000000000'; ;) {
      const rows: VaultKeyRow[] = await this.dataSource.query(
        `SELECT "key_id", "tenant_id", "purpose", "generation", "wrapped", "kek_id" FROM "vault_keys"
         WHERE "kek_id" <> $1 AND "key_id" > $2 ORDER BY "key_id" LIMIT ${this.batchSize}`,
        [kekId, after],
      );
      if (rows.length === 0) break;
      for (const row of rows) {
        const key = await this.keys.unwrapRow(row);
        const { kekId: now, wrapped } = await this.keys.wrapper.wrap(key, wrapContext(row));
        await this.dataSource.query(`UPDATE "vault_keys" SET "wrapped" = $2, "kek_id" = $3 WHERE "key_id" = $1 AND "kek_id" = $4`, [
          row.key_id,
          wrapped,
          now,
          row.kek_id,
        ]);
        done++;
      }
      after = rows[rows.length - 1]!.key_id;
      progress(`re-wrapped ${done} of ${total} vault keys under key-encryption key ${kekId}`);
    }
    return { kekId, rewrapped: done };
  }

  /**
   * Moves every sealed value to its tenant's newest data key: a new data key for each tenant (unless `resume`, which
   * only finishes tenants an interrupted run left with two active keys), every registered sealed column re-sealed in
   * batches, then the older keys retired once nothing refers to them. Retired keys still open (nothing is destroyed).
   */
  async reEncrypt(
    progress: Progress = () => undefined,
    options: { tenantId?: string; resume?: boolean } = {},
  ): Promise<{ tenants: number; resealed: number; retired: number }> {
    if (!options.resume) {
      const single: { tenant_id: string }[] = await this.dataSource.query(
        `SELECT "tenant_id" FROM "vault_keys" WHERE "purpose" = 'data' AND "state" = 'active' AND ($1::uuid IS NULL OR "tenant_id" = $1::uuid)
         GROUP BY 1 HAVING count(*) = 1 ORDER BY 1`,
        [options.tenantId ?? null],
      );
      for (const [i, { tenant_id }] of single.entries()) {
        await this.keys.rotate(tenant_id, 'data');
        if ((i + 1) % this.batchSize === 0 || i + 1 === single.length) progress(`new data keys: ${i + 1} of ${single.length} tenants`);
      }
    }
    const tenants = (await this.tenantsReEncrypting()).filter((t) => options.tenantId === undefined || t === options.tenantId);
    let resealed = 0;
    let retired = 0;
    for (const [i, tenantId] of tenants.entries()) {
      resealed += await this.resealTenant(tenantId, progress);
      retired += await this.retireOlderKeys(tenantId, progress);
      progress(`tenant ${tenantId} done (${i + 1} of ${tenants.length})`);
    }
    return { tenants: tenants.length, resealed, retired };
  }

  private async tenantsReEncrypting(): Promise<string[]> {
    const rows: { tenant_id: string }[] = await this.dataSource.query(
      `SELECT "tenant_id" FROM "vault_keys" WHERE "purpose" = 'data' AND "state" = 'active' GROUP BY 1 HAVING count(*) > 1 ORDER BY 1`,
    );
    return rows.map((r) => r.tenant_id);
  }

  private async newestDataKey(tenantId: string): Promise<{ key_id: string; age_ms: number }> {
    const [row] = await this.dataSource.query(
      `SELECT "key_id", (extract(epoch FROM now() - "created_at") * 1000)::float8 AS age_ms FROM "vault_keys"
       WHERE "tenant_id" = $1 AND "purpose" = 'data' AND "state" = 'active' ORDER BY "generation" DESC LIMIT 1`,
      [tenantId],
    );
    return row;
  }

  /** Every value of the tenant not under its newest data key, re-sealed under it (compare-and-swap per row). */
  private async resealTenant(tenantId: string, progress: Progress): Promise<number> {
    const target = (await this.newestDataKey(tenantId)).key_id;
    const header = envelopeHeader(target);
    let resealed = 0;
    for (const column of this.columns) {
      const keys = column.keyColumns.map(q);
      for (let after: unknown[] | undefined; ;) {
        const params: unknown[] = [tenantId, header];
        const from = after ? ` AND (${keys.join(', ')}) > (${after.map((v) => `$${params.push(v)}`).join(', ')})` : '';
        const rows: Record<string, unknown>[] = await this.dataSource.query(
          `SELECT ${[...keys, q(column.tenantColumn), q(column.column)].join(', ')} FROM ${q(column.table)}
           WHERE ${q(column.tenantColumn)} = $1 AND ${q(column.column)} IS NOT NULL AND substring(${q(column.column)} FROM 1 FOR 17) <> $2${from}
           ORDER BY ${keys.join(', ')} LIMIT ${this.batchSize}`,
          params,
        );
        if (rows.length === 0) break;
        for (const row of rows) {
          const old = row[column.column] as Buffer;
          const sealed = await this.sealUnder(tenantId, target, await this.vault.open(tenantId, old, column.aad(row)), column.aad(row));
          const where = column.keyColumns.map((k, n) => `${q(k)} = $${n + 3}`).join(' AND ');
          await this.dataSource.query(`UPDATE ${q(column.table)} SET ${q(column.column)} = $1 WHERE ${q(column.column)} = $2 AND ${where}`, [
            sealed,
            old,
            ...column.keyColumns.map((k) => row[k]),
          ]);
          resealed++;
        }
        after = column.keyColumns.map((k) => rows[rows.length - 1]![k]);
        progress(`tenant ${tenantId}: ${column.table}.${column.column}: re-sealed ${resealed}`);
      }
    }
    return resealed;
  }

  /** Seals under `keyId`, the tenant's newest key (this process's idea of the current key may be older: re-read). */
  private async sealUnder(tenantId: string, keyId: string, plaintext: Buffer, aad: string): Promise<Buffer> {
    let sealed = await this.vault.seal(tenantId, plaintext, aad);
    if (envelopeKeyId(sealed) !== keyId) {
      this.keys.forget();
      sealed = await this.vault.seal(tenantId, plaintext, aad);
    }
    return sealed;
  }

  /**
   * Retires the tenant's older data keys: once every process has had time to move to the newest one (waiting if the
   * new key is younger than retireAfterMs), a last pass re-seals anything sealed under an old key meanwhile.
   */
  private async retireOlderKeys(tenantId: string, progress: Progress): Promise<number> {
    const newest = await this.newestDataKey(tenantId);
    const wait = this.retireAfterMs - newest.age_ms;
    if (wait > 0) {
      progress(`tenant ${tenantId}: waiting ${Math.ceil(wait / 1000)} s for every process to seal under the new data key`);
      await sleep(wait);
    }
    await this.resealTenant(tenantId, () => undefined);
    // TypeORM answers an UPDATE with [rows, affected].
    const [, retired]: [unknown, number] = await this.dataSource.query(
      `UPDATE "vault_keys" SET "state" = 'retired', "retired_at" = now()
       WHERE "tenant_id" = $1 AND "purpose" = 'data' AND "state" = 'active' AND "key_id" <> $2`,
      [tenantId, newest.key_id],
    );
    return retired;
  }
}
