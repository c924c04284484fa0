import { MigrationInterface, QueryRunner } from 'typeorm';
import { inMigrationVault } from '../vault/migration-vault';
import { proxyConfigurationAad, proxyKeyAad } from '../vault/sealed-columns';

const BATCH = 500;

/**
 * Proxy keys and configurations leave plaintext: a key becomes its lookup hash (unique, how invocations find the proxy)
 * and a sealed copy, a configuration sealed JSON. Existing rows are converted in batches of 500 inside this migration's
 * transaction (a failure leaves the table as it was); down() restores the plaintext columns the same way.
 */
export class SealedProxies1764100100000 implements MigrationInterface {
  name = 'SealedProxies1764100100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "proxies" ADD "key_hash" varchar(64), ADD "key_sealed" bytea, ADD "configuration_sealed" bytea`);
    const [{ n: total }] = await q.query(`SELECT count(*)::int AS n FROM "proxies"`);
    if (total > 0) {
      await inMigrationVault(q, async (vault, progress) => {
        for (let done = 0; ;) {
          const rows: { id: string; tenant_id: string; key: string; configuration: Record<string, string> | null }[] = await q.query(
            `SELECT "id", "tenant_id", "key", "configuration" FROM "proxies" WHERE "key_hash" IS NULL ORDER BY "id" LIMIT ${BATCH}`,
          );
          if (rows.length === 0) break;
          for (const row of rows) {
            const configuration = row.configuration === null ? null : Buffer.from(JSON.stringify(row.configuration));
            await q.query(`UPDATE "proxies" SET "key_hash" = $2, "key_sealed" = $3, "configuration_sealed" = $4 WHERE "id" = $1`, [
              row.id,
              await vault.lookupHash(row.key),
              await vault.seal(row.tenant_id, Buffer.from(row.key), proxyKeyAad(row.tenant_id, row.id)),
              configuration && (await vault.seal(row.tenant_id, configuration, proxyConfigurationAad(row.tenant_id, row.id))),
            ]);
          }
          done += rows.length;
          progress(`sealing proxy keys and configurations: ${done} of ${total}`);
        }
      });
    }
    await q.query(`ALTER TABLE "proxies" ALTER "key_hash" SET NOT NULL, ALTER "key_sealed" SET NOT NULL, DROP "key", DROP "configuration"`);
    await q.query(`CREATE UNIQUE INDEX "proxies_key_hash_key" ON "proxies" ("key_hash")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "proxies" ADD "key" varchar(64), ADD "configuration" jsonb`);
    const [{ n: total }] = await q.query(`SELECT count(*)::int AS n FROM "proxies"`);
    if (total > 0) {
      await inMigrationVault(q, async (vault, progress) => {
        for (let done = 0; ;) {
          const rows: { id: string; tenant_id: string; key_sealed: Buffer; configuration_sealed: Buffer | null }[] = await q.query(
            `SELECT "id", "tenant_id", "key_sealed", "configuration_sealed" FROM "proxies" WHERE "key" IS NULL ORDER BY "id" LIMIT ${BATCH}`,
          );
          if (rows.length === 0) break;
          for (const row of rows) {
            const sealed = row.configuration_sealed;
            await q.query(`UPDATE "proxies" SET "key" = $2, "configuration" = $3::jsonb WHERE "id" = $1`, [
              row.id,
              (await vault.open(row.tenant_id, row.key_sealed, proxyKeyAad(row.tenant_id, row.id))).toString(),
              sealed && (await vault.open(row.tenant_id, sealed, proxyConfigurationAad(row.tenant_id, row.id))).toString(),
            ]);
          }
          done += rows.length;
          progress(`restoring plaintext proxy keys and configurations: ${done} of ${total}`);
        }
      });
    }
    await q.query(`DROP INDEX "proxies_key_hash_key"`);
    await q.query(`ALTER TABLE "proxies" ALTER "key" SET NOT NULL, DROP "key_hash", DROP "key_sealed", DROP "configuration_sealed"`);
    await q.query(`CREATE UNIQUE INDEX "proxies_key_key" ON "proxies" ("key")`);
  }
}
