import { randomUUID } from 'node:crypto';
import { Proxy, tokenAad, VaultKeyError } from '@gatehouse/domain';
import { Database, DatabaseVaultCrypto, envelopeKeyId, kekIdOf, TypeormProxyRepository, VaultKeyStore, VaultRotation } from '@gatehouse/persistence';
import { OwnDatabase, ownDatabase } from '@gatehouse/test-support/own-database';
import { testKeyWrapper } from '@gatehouse/test-support/test-vault';
import { aProxyRecord as aProxy } from '@gatehouse/test-support/proxy-record';

const OLD = '1'.repeat(64);
const NEW = '2'.repeat(64);

/** A process's vault that re-reads its keys on every call (1 ms cache): what a rotation could break, it would. */
function aProcess(database: Database, current: string, previous: string[] = []): DatabaseVaultCrypto {
  return new DatabaseVaultCrypto(new VaultKeyStore(database.dataSource, testKeyWrapper(current, previous), { keyTtlMs: 1, currentTtlMs: 1 }));
}

describe('vault rotation (rotate-key, re-encrypt) on PostgreSQL', () => {
  // Rotations touch every key of a database: these run in one of their own.
  let own: OwnDatabase;
  let database: Database;
  beforeAll(async () => {
    own = await ownDatabase('vault_rotation');
    database = own.database;
  });
  afterAll(() => own?.drop());

  it('rotate-key re-wraps every key while seal and open run in other processes, with no failure; resumes after an interruption', async () => {
    const before = aProcess(database, OLD);
    const tenants = Array.from({ length: 6 }, () => randomUUID());
    const values = await Promise.all(
      tenants.map(async (t) => ({ t, sealed: await before.seal(t, Buffer.from(`v-${t}`), `row:${t}`), print: await before.fingerprint(t, 'x') })),
    );
    const lookup = await before.lookupHash('proxy-key');

    // Every process restarted with VAULT_KEY=NEW, VAULT_KEY_PREVIOUS=OLD.
    const lines: string[] = [];
    const rotator = new VaultRotation(database.dataSource, aProcess(database, NEW, [OLD]), { batchSize: 3 });
    await expect(
      rotator.rewrapKeys(() => {
        throw new Error('interrupted');
      }),
    ).rejects.toThrow('interrupted');

    const failures: unknown[] = [];
    let running = true;
    let calls = 0;
    const worker = async (vault: DatabaseVaultCrypto) => {
      while (running) {
        for (const { t, sealed, print } of values) {
          try {
            const fresh = await vault.seal(t, Buffer.from('fresh'), `fresh:${t}`);
            if ((await vault.open(t, fresh, `fresh:${t}`)).toString() !== 'fresh') throw new Error('fresh value changed');
            if ((await vault.open(t, sealed, `row:${t}`)).toString() !== `v-${t}`) throw new Error('old value changed');
            if ((await vault.fingerprint(t, 'x')) !== print) throw new Error('fingerprint changed');
            if ((await vault.lookupHash('proxy-key')) !== lookup) throw new Error('lookup hash changed');
            calls += 4;
          } catch (error) {
            failures.push(error);
          }
        }
      }
    };
    const workers = [1, 2, 3].map(() => worker(aProcess(database, NEW, [OLD])));
    const result = await rotator.rewrapKeys((line) => lines.push(line));
    const callsDuringRotation = calls;
    running = false;
    await Promise.all(workers);

    expect(failures).toEqual([]);
    expect(callsDuringRotation).toBeGreaterThan(0);
    expect(result.kekId).toBe(kekIdOf(Buffer.from(NEW, 'hex')));
    expect(lines.at(-1)).toMatch(new RegExp(`^re-wrapped (\\d+) of \\1 vault keys under key-encryption key ${result.kekId}$`));
    expect(await rotator.status()).toMatchObject({ kekId: result.kekId, keysByKek: { [result.kekId]: tenants.length * 2 + 1 } });
    // VAULT_KEY_PREVIOUS may go now; the old key alone opens nothing any more.
    const after = aProcess(database, NEW);
    for (const { t, sealed } of values) expect((await after.open(t, sealed, `row:${t}`)).toString()).toBe(`v-${t}`);
    await expect(aProcess(database, OLD).open(values[0]!.t, values[0]!.sealed, `row:${values[0]!.t}`)).rejects.toThrow(VaultKeyError);
  });

  it('re-encrypt moves every sealed column to a new data key, resumes after an interruption, and retires the old keys', async () => {
    const vault = aProcess(database, NEW);
    const proxies = new TypeormProxyRepository(database.dataSource.manager, vault);
    const tenants = [randomUUID(), randomUUID()];
    const written: Proxy[] = [];
    for (const tenantId of tenants) {
      await database.dataSource.query('INSERT INTO tenants (id, name, created_at) VALUES ($1, $2, now())', [tenantId, `rotation-${tenantId}`]);
      for (let i = 0; i < 5; i++) {
        const proxy = aProxy(tenantId, { configuration: { SECRET: `s-${i}` } });
        await proxies.insert(proxy);
        written.push(proxy);
      }
    }
    // A token of each tenant too (the tokens table registers its sealed column).
    for (const tenantId of tenants) {
      await database.dataSource.query(
        `INSERT INTO tokens (tenant_id, id, type, sealed, containers, container_prefixes, metadata, created_at) VALUES ($1, 'tok_1', 'token', $2, '{/}', '{/}', '{}', now())`,
        [tenantId, await vault.seal(tenantId, Buffer.from('{"data":"4242"}'), tokenAad(tenantId, 'tok_1'))],
      );
    }
    const [{ key_sealed: oldEnvelope }] = await database.dataSource.query('SELECT key_sealed FROM proxies WHERE id = $1', [written[0]!.id]);
    const rotation = new VaultRotation(database.dataSource, aProcess(database, NEW), { batchSize: 2, retireAfterMs: 0 });
    let batches = 0;
    await expect(
      rotation.reEncrypt((line) => {
        if (line.includes('re-sealed') && ++batches === 2) throw new Error('interrupted');
      }),
    ).rejects.toThrow('interrupted');
    expect((await rotation.status()).tenantsReEncrypting).toBeGreaterThanOrEqual(tenants.length);

    // Meanwhile a writer seals under the new key, and every proxy still reads back.
    const late = aProxy(tenants[0]!, { configuration: { SECRET: 'late' } });
    await proxies.insert(late);
    written.push(late);
    for (const p of written) expect(await proxies.findById(p.tenantId, p.id)).toEqual(p);

    const result = await rotation.reEncrypt(undefined, { resume: true });
    // Every tenant with a data key was given a new one (the previous test's too); each retires its old one.
    expect(result.tenants).toBeGreaterThanOrEqual(tenants.length);
    expect(result.retired).toBe(result.tenants);
    expect((await rotation.status()).tenantsReEncrypting).toBe(0);
    for (const tenantId of tenants) {
      const [current] = await database.dataSource.query(`SELECT key_id FROM vault_keys WHERE tenant_id = $1 AND purpose = 'data' AND state = 'active'`, [
        tenantId,
      ]);
      const rows: { key_sealed: Buffer; configuration_sealed: Buffer }[] = await database.dataSource.query(
        'SELECT key_sealed, configuration_sealed FROM proxies WHERE tenant_id = $1',
        [tenantId],
      );
      for (const row of rows) expect([envelopeKeyId(row.key_sealed), envelopeKeyId(row.configuration_sealed)]).toEqual([current.key_id, current.key_id]);
      const [token] = await database.dataSource.query(`SELECT sealed FROM tokens WHERE tenant_id = $1 AND id = 'tok_1'`, [tenantId]);
      expect(envelopeKeyId(token.sealed)).toBe(current.key_id);
      expect((await vault.open(tenantId, token.sealed, tokenAad(tenantId, 'tok_1'))).toString()).toBe('{"data":"4242"}');
    }
    for (const p of written) expect(await proxies.findById(p.tenantId, p.id)).toEqual(p);
    expect(await proxies.findByKey(late.key)).toEqual(late);
    // A retired key is never destroyed: a copy sealed under it still opens.
    expect((await vault.open(written[0]!.tenantId, oldEnvelope, `proxy-key:${written[0]!.tenantId}:${written[0]!.id}`)).toString()).toBe(written[0]!.key);
  });
});
