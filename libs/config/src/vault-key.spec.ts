import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from './config';
import { GENERATED_VAULT_KEY_FILE, parseVaultKey, resolveVaultKeys, rotateGeneratedVaultKey } from './vault-key';

const HEX = '5be4c8a6f1d2039e7a8b9c0d1e2f30415263748596a7b8c9dae0f1021324354a';
const BASE64 = Buffer.from(HEX, 'hex').toString('base64');

function inTempDir(work: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'gh-vault-key-'));
  try {
    work(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('VAULT_KEY', () => {
  it('takes 32 bytes as hex or base64', () => {
    expect(parseVaultKey(HEX).toString('hex')).toBe(HEX);
    expect(parseVaultKey(BASE64).toString('hex')).toBe(HEX);
    expect(loadConfig({ VAULT_KEY: BASE64 }).vaultKey).toBe(BASE64);
    expect(resolveVaultKeys({ ...loadConfig({ VAULT_KEY: HEX, VAULT_KEY_PREVIOUS: `${BASE64}, ${'b'.repeat(64)}` }) })).toMatchObject({
      current: Buffer.from(HEX, 'hex'),
      previous: [Buffer.from(HEX, 'hex'), Buffer.from('b'.repeat(64), 'hex')],
      source: 'VAULT_KEY',
    });
  });

  it('refuses anything else without echoing the secret, and refuses both sources at once', () => {
    for (const bad of ['secret-material-abc', HEX.slice(2), Buffer.alloc(16).toString('base64')]) {
      expect(() => loadConfig({ VAULT_KEY: bad })).toThrow(/^VAULT_KEY must be a 32-byte key as base64 or hex/);
      expect(() => loadConfig({ VAULT_KEY: bad })).not.toThrow(bad);
    }
    expect(() => loadConfig({ VAULT_KEY_PREVIOUS: `${HEX},secret-material-abc` })).toThrow(/^VAULT_KEY_PREVIOUS must be/);
    expect(() => loadConfig({ VAULT_KEY: HEX, VAULT_KEY_FILE: '/k' })).toThrow('VAULT_KEY and VAULT_KEY_FILE are both set: give one');
    expect(() => loadConfig({ VAULT_KEY_PREVIOUS: HEX, VAULT_KEY_PREVIOUS_FILE: '/k' })).toThrow(/both set/);
  });

  it('reads VAULT_KEY_FILE and VAULT_KEY_PREVIOUS_FILE, naming the file but never its content when it is wrong', () => {
    inTempDir((dir) => {
      writeFileSync(join(dir, 'kek'), `${HEX}\n`);
      writeFileSync(join(dir, 'old'), `${BASE64}\n${'c'.repeat(64)}\n`);
      writeFileSync(join(dir, 'bad'), 'secret-material-abc\n');
      const keys = resolveVaultKeys({ dataDir: dir, vaultKeyFile: join(dir, 'kek'), vaultKeyPreviousFile: join(dir, 'old') });
      expect(keys.current.toString('hex')).toBe(HEX);
      expect(keys.previous).toHaveLength(2);
      expect(() => resolveVaultKeys({ dataDir: dir, vaultKeyFile: join(dir, 'bad') })).toThrow(
        `VAULT_KEY_FILE (${join(dir, 'bad')}) does not hold 32-byte keys`,
      );
      expect(() => resolveVaultKeys({ dataDir: dir, vaultKeyFile: join(dir, 'bad') })).not.toThrow('secret-material');
    });
  });

  it('is generated once into DATA_DIR (0600) when none is given, and rotate-key puts a new one first', () => {
    inTempDir((dataDir) => {
      const first = resolveVaultKeys({ dataDir });
      expect(first.generated).toBe(join(dataDir, GENERATED_VAULT_KEY_FILE));
      expect(statSync(first.generated!).mode & 0o777).toBe(0o600);
      const again = resolveVaultKeys({ dataDir });
      expect(again.generated).toBeUndefined();
      expect(again.current.equals(first.current)).toBe(true);
      expect(() => resolveVaultKeys({ dataDir: join(dataDir, 'none') }, { generate: false })).toThrow(/ENOENT/);

      const rotated = rotateGeneratedVaultKey({ dataDir });
      expect(rotated.current.equals(first.current)).toBe(false);
      const after = resolveVaultKeys({ dataDir });
      expect(after.current.equals(rotated.current)).toBe(true);
      expect(after.previous.map((k) => k.toString('hex'))).toEqual([first.current.toString('hex')]);
      expect(statSync(first.generated!).mode & 0o777).toBe(0o600);
      expect(readFileSync(first.generated!, 'utf8').trim().split('\n')).toHaveLength(2);
      expect(() => rotateGeneratedVaultKey({ dataDir, vaultKey: HEX })).toThrow(/VAULT_KEY_PREVIOUS/);
    });
  });
});
