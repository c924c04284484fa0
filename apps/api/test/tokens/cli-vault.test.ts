import { randomUUID } from 'node:crypto';
import { DatabaseVaultCrypto, kekIdOf, TypeormProxyRepository, VaultKeyStore } from '@gatehouse/persistence';
import { OwnDatabase, ownDatabase } from '@gatehouse/test-support/own-database';
import { API_MAIN, CLI_MAIN, runToCompletion } from '@gatehouse/test-support/service-process';
import { testKeyWrapper } from '@gatehouse/test-support/test-vault';
import { aProxyRecord } from '@gatehouse/test-support/proxy-record';

const OLD = '3'.repeat(64);
const NEW = Buffer.from('4'.repeat(64), 'hex').toString('base64');
const kekId = (hexOrBase64: string) => kekIdOf(Buffer.from(hexOrBase64, /^[0-9a-f]{64}$/.test(hexOrBase64) ? 'hex' : 'base64'));

describe('gatehouse vault status / rotate-key / re-encrypt', () => {
  let own: OwnDatabase;
  const proxies: { id: string; tenantId: string; key: string }[] = [];
  const cli = (env: Record<string, string>, ...args: string[]) =>
    runToCompletion(CLI_MAIN, ['vault', ...args], { DATABASE_URL: own.url, LOG_LEVEL: 'silent', ...env });

  beforeAll(async () => {
    own = await ownDatabase('cli_vault');
    const repository = new TypeormProxyRepository(
      own.database.dataSource.manager,
      new DatabaseVaultCrypto(new VaultKeyStore(own.database.dataSource, testKeyWrapper(OLD))),
    );
    for (let i = 0; i < 3; i++) {
      const tenantId = randomUUID();
      await own.database.dataSource.query('INSERT INTO tenants (id, name, created_at) VALUES ($1, $2, now())', [tenantId, `cli-vault-${i}`]);
      const proxy = aProxyRecord(tenantId, { configuration: { SECRET: `s${i}` } });
      await repository.insert(proxy);
      proxies.push(proxy);
    }
  });
  afterAll(() => own?.drop());

  it('rotates the key-encryption key, then the data keys, and refuses a wrong key with one line', async () => {
    const status = await cli({ VAULT_KEY: OLD }, 'status', '--json');
    expect(status.code).toBe(0);
    // Three tenants' data and fingerprint-free proxies: a data key each, and the global lookup key.
    expect(JSON.parse(status.stdout)).toEqual({
      kek_id: kekId(OLD),
      keys_by_kek: { [kekId(OLD)]: 4 },
      data_keys: { active: 3, retired: 0 },
      tenants_re_encrypting: 0,
    });

    const nothing = await cli({ VAULT_KEY: OLD }, 'rotate-key');
    expect(nothing).toMatchObject({ code: 0, stdout: expect.stringContaining('to rotate: set VAULT_KEY to a new key') });

    const wrong = await cli({ VAULT_KEY: NEW }, 'rotate-key');
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toBe('');
    expect(wrong.stderr.trim().split('\n')).toHaveLength(1);
    expect(wrong.stderr).toContain(`wrapped by key-encryption key ${kekId(OLD)}, which this process does not have`);
    expect(wrong.stderr).not.toContain(NEW);

    const rotated = await cli({ VAULT_KEY: NEW, VAULT_KEY_PREVIOUS: OLD }, 'rotate-key');
    expect(rotated).toMatchObject({ code: 0, stdout: `4 vault keys re-wrapped under ${kekId(NEW)}\n` });
    expect(rotated.stderr).toContain(`re-wrapped 4 of 4 vault keys under key-encryption key ${kekId(NEW)}`);

    const reEncrypted = await cli({ VAULT_KEY: NEW }, 're-encrypt', '--retire-after-seconds', '0', '--json');
    expect(reEncrypted.code).toBe(0);
    expect(JSON.parse(reEncrypted.stdout)).toEqual({ tenants: 3, resealed: 6, retired: 3 });
    expect(reEncrypted.stderr).toContain('new data keys: 3 of 3 tenants');

    const after = await cli({ VAULT_KEY: NEW }, 'status');
    expect(after.stdout).toContain(`${kekId(NEW)}  7  (current)`);
    expect(after.stdout).toContain('data keys: 3 active, 3 retired');
    const repository = new TypeormProxyRepository(
      own.database.dataSource.manager,
      new DatabaseVaultCrypto(new VaultKeyStore(own.database.dataSource, testKeyWrapper(NEW))),
    );
    for (const p of proxies) expect(await repository.findByKey(p.key)).toMatchObject({ id: p.id, configuration: { SECRET: expect.stringMatching(/^s\d$/) } });

    expect(await cli({ VAULT_KEY: NEW }, 're-encrypt', '--tenant', 'nope')).toMatchObject({ code: 2, stdout: '' });

    // A service given only the old key after the rotation refuses to start, with one line naming both key ids.
    const service = await runToCompletion(API_MAIN, [], { DATABASE_URL: own.url, VAULT_KEY: OLD, PORT: '0', LOG_LEVEL: 'silent' });
    expect(service.code).toBe(1);
    expect(service.stderr.trim().split('\n')).toHaveLength(1);
    expect(service.stderr).toMatch(
      new RegExp(
        `^gatehouse: failed to start: a vault data key is wrapped by key-encryption key ${kekId(NEW)}, which this process does not have \\(it has ${kekId(OLD)}\\)`,
      ),
    );
  });
});
