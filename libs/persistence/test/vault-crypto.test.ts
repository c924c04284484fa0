import { randomUUID } from 'node:crypto';
import { VaultKeyError } from '@gatehouse/domain';
import { ambientTransaction, Database, DatabaseVaultCrypto, openDatabase, VaultKeyStore } from '@gatehouse/persistence';
import { TEST_DATABASE_URL } from '@gatehouse/test-support/test-env';
import { testKeyWrapper } from '@gatehouse/test-support/test-vault';
import { PGLITE, PGLITE_OPEN_TIMEOUT_MS } from './persistence-backends';

const OTHER_KEK = 'a'.repeat(64);

/** A process's view of the vault: its own pool and its own key cache. */
async function aProcess(kek?: string): Promise<{ database: Database; vault: DatabaseVaultCrypto }> {
  const database = await openDatabase({ url: TEST_DATABASE_URL, dataDir: '', poolSize: 3 });
  return { database, vault: new DatabaseVaultCrypto(new VaultKeyStore(database.dataSource, testKeyWrapper(kek))) };
}

describe('DatabaseVaultCrypto on PostgreSQL', () => {
  let a: { database: Database; vault: DatabaseVaultCrypto };
  let b: { database: Database; vault: DatabaseVaultCrypto };
  beforeAll(async () => {
    a = await aProcess();
    b = await aProcess();
  });
  afterAll(async () => {
    await a?.database.close();
    await b?.database.close();
  });

  it('opens what it sealed, in another process too; the envelope holds no plaintext', async () => {
    const tenant = randomUUID();
    const sealed = await a.vault.seal(tenant, Buffer.from('sk_live_4242424242424242'), `proxy:${tenant}:1`);
    expect(sealed.includes(Buffer.from('4242424242424242'))).toBe(false);
    expect(sealed[0]).toBe(1);
    expect(sealed.length).toBe(1 + 16 + 12 + 16 + 'sk_live_4242424242424242'.length);
    expect((await a.vault.open(tenant, sealed, `proxy:${tenant}:1`)).toString()).toBe('sk_live_4242424242424242');
    expect((await b.vault.open(tenant, sealed, `proxy:${tenant}:1`)).toString()).toBe('sk_live_4242424242424242');
    // A fresh IV each time.
    expect((await a.vault.seal(tenant, Buffer.from('x'), 'a')).equals(await a.vault.seal(tenant, Buffer.from('x'), 'a'))).toBe(false);
  });

  it('refuses another aad, a damaged envelope and another tenant', async () => {
    const tenant = randomUUID();
    const other = randomUUID();
    await b.vault.seal(other, Buffer.from('other'), 'x');
    const sealed = await a.vault.seal(tenant, Buffer.from('secret'), 'token:1');
    await expect(a.vault.open(tenant, sealed, 'token:2')).rejects.toThrow('does not open');
    const damaged = Buffer.from(sealed);
    damaged[damaged.length - 1]! ^= 1;
    await expect(a.vault.open(tenant, damaged, 'token:1')).rejects.toThrow('does not open');
    await expect(a.vault.open(other, sealed, 'token:1')).rejects.toThrow("not one of this tenant's data keys");
    await expect(a.vault.open(tenant, Buffer.from('plain'), 'token:1')).rejects.toThrow('not a sealed value');
  });

  it('keys fingerprints per tenant and lookup hashes globally, the same in every process', async () => {
    const [t1, t2] = [randomUUID(), randomUUID()];
    expect(await a.vault.fingerprint(t1, '4242')).toBe(await b.vault.fingerprint(t1, '4242'));
    expect(await a.vault.fingerprint(t1, '4242')).not.toBe(await a.vault.fingerprint(t2, '4242'));
    expect(await a.vault.lookupHash('key')).toBe(await b.vault.lookupHash('key'));
    expect(await a.vault.lookupHash('key')).not.toBe(await a.vault.lookupHash('key2'));
  });

  it('makes one first key when two processes ask at once', async () => {
    const tenant = randomUUID();
    const fresh = await Promise.all([aProcess(), aProcess()]);
    try {
      const sealed = await Promise.all(fresh.flatMap(({ vault }) => [1, 2, 3].map((i) => vault.seal(tenant, Buffer.from(`v${i}`), 'x'))));
      for (const s of sealed) for (const { vault } of fresh) expect((await vault.open(tenant, s, 'x')).toString()).toMatch(/^v\d$/);
      const [row] = await a.database.dataSource.query(`SELECT count(*)::int AS n FROM vault_keys WHERE tenant_id = $1`, [tenant]);
      expect(row.n).toBe(1);
    } finally {
      await Promise.all(fresh.map(({ database }) => database.close()));
    }
  });

  it('stores keys only wrapped, and a process with another key-encryption key refuses clearly', async () => {
    const tenant = randomUUID();
    const sealed = await a.vault.seal(tenant, Buffer.from('secret'), 'x');
    const wrong = await aProcess(OTHER_KEK);
    try {
      const error = await wrong.vault.open(tenant, sealed, 'x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(VaultKeyError);
      expect((error as Error).message).toMatch(/wrapped by key-encryption key local-[0-9a-f]{16}, which this process does not have .*VAULT_KEY/);
      await expect(wrong.vault.verifyKeys()).rejects.toThrow(VaultKeyError);
    } finally {
      await wrong.database.close();
    }
  });

  it('a key made inside a transaction that rolls back is not used afterwards', async () => {
    const tenant = randomUUID();
    const { dataSource } = a.database;
    await expect(
      dataSource.transaction((em) =>
        ambientTransaction.run(em, async () => {
          await a.vault.seal(tenant, Buffer.from('lost'), 'x');
          throw new Error('rolled back');
        }),
      ),
    ).rejects.toThrow('rolled back');
    const sealed = await a.vault.seal(tenant, Buffer.from('kept'), 'x');
    expect((await b.vault.open(tenant, sealed, 'x')).toString()).toBe('kept');
  });
});

describe('DatabaseVaultCrypto on embedded PGlite (one connection)', () => {
  let database: Database;
  beforeAll(async () => {
    database = (await PGLITE.open()).database;
  }, PGLITE_OPEN_TIMEOUT_MS);
  afterAll(() => database?.close());

  it('makes and reads keys inside a transaction without waiting for a second connection', async () => {
    const vault = new DatabaseVaultCrypto(new VaultKeyStore(database.dataSource, testKeyWrapper()));
    const tenant = randomUUID();
    const sealed = await database.dataSource.transaction((em) => ambientTransaction.run(em, () => vault.seal(tenant, Buffer.from('inside'), 'x')));
    const reader = new DatabaseVaultCrypto(new VaultKeyStore(database.dataSource, testKeyWrapper()));
    await database.dataSource.transaction((em) =>
      ambientTransaction.run(em, async () => expect((await reader.open(tenant, sealed, 'x')).toString()).toBe('inside')),
    );
    expect(await vault.lookupHash('k')).toBe(await reader.lookupHash('k'));
  });
});
