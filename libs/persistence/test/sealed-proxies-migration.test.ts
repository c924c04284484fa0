import { randomUUID } from 'node:crypto';
import {
  ambientTransaction,
  Database,
  DatabaseVaultCrypto,
  MIGRATIONS,
  openDatabase,
  TypeormProxyRepository,
  VaultKeyStore,
  withMigrationVaultOptions,
} from '@gatehouse/persistence';
import { TEST_DATABASE_URL } from '@gatehouse/test-support/test-env';
import { testKeyWrapper } from '@gatehouse/test-support/test-vault';

const SealedProxies = MIGRATIONS.find((m) => m.name === 'SealedProxies1764100100000')!;

describe('migration SealedProxies1764100100000', () => {
  let database: Database;
  beforeAll(async () => (database = await openDatabase({ url: TEST_DATABASE_URL, dataDir: '' })));
  afterAll(() => database.close());

  it('seals the keys and configurations of existing proxies, and down() restores them in plaintext', async () => {
    const runner = database.dataSource.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    const progress: string[] = [];
    const keyWrapper = testKeyWrapper();
    try {
      await withMigrationVaultOptions({ keyWrapper, progress: (line) => progress.push(line) }, async () => {
        // The table as it was before, holding plaintext (everything else in this transaction, rolled back at the end).
        await new SealedProxies().down(runner);
        const tenantId = randomUUID();
        await runner.query('INSERT INTO tenants (id, name, created_at) VALUES ($1, $2, now())', [tenantId, `mig-${tenantId}`]);
        const proxies = [1, 2, 3].map((i) => ({
          id: randomUUID(),
          key: `plaintextProxyKey${i}${randomUUID().replace(/-/g, '')}`.slice(0, 40),
          configuration: i === 3 ? null : JSON.parse(`{"SECRET": "sk_migration_${i}", "__proto__": "data"}`),
        }));
        for (const p of proxies) {
          await runner.query(
            `INSERT INTO proxies (id, tenant_id, name, key, destination_url, configuration, require_auth, created_at) VALUES ($1, $2, 'p', $3, 'https://x.example', $4, true, now())`,
            [p.id, tenantId, p.key, p.configuration && JSON.stringify(p.configuration)],
          );
        }
        progress.length = 0;
        await new SealedProxies().up(runner);
        expect(progress.at(-1)).toMatch(/^sealing proxy keys and configurations: (\d+) of \1$/);

        const dump = JSON.stringify(await runner.query(`SELECT to_jsonb(p)::text FROM proxies p WHERE tenant_id = $1`, [tenantId]));
        for (const p of proxies) expect(dump).not.toContain(p.key);
        expect(dump).not.toContain('sk_migration_');
        const vault = new DatabaseVaultCrypto(new VaultKeyStore(database.dataSource, keyWrapper));
        const repository = new TypeormProxyRepository(runner.manager, vault);
        await ambientTransaction.run(runner.manager, async () => {
          for (const p of proxies) {
            const found = await repository.findByKey(p.key);
            expect(found).toMatchObject({ id: p.id, key: p.key });
            expect(found!.configuration === null ? null : { ...found!.configuration }).toEqual(p.configuration);
          }
        });

        await new SealedProxies().down(runner);
        const restored: { id: string; key: string; configuration: unknown }[] = await runner.query(
          'SELECT id, key, configuration FROM proxies WHERE tenant_id = $1',
          [tenantId],
        );
        for (const p of proxies) expect(restored.find((r) => r.id === p.id)).toEqual({ id: p.id, key: p.key, configuration: p.configuration });
        await new SealedProxies().up(runner);
      });
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });
});
