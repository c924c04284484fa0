import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { preparePrivateDirectory } from './private-directory';

/** A 256-bit key-encryption key from base64 (44 characters with padding) or hex (64 characters); throws otherwise. */
export function parseVaultKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)
      ? Buffer.from(trimmed, 'base64')
      : Buffer.alloc(0);
  if (key.length !== 32) throw new Error('not a 32-byte key');
  return key;
}

/** Several keys, one per line or separated by commas (VAULT_KEY_PREVIOUS, and the generated key file). */
export function parseVaultKeyList(text: string): Buffer[] {
  return text
    .split(/[\s,]+/)
    .filter((part) => part.length > 0)
    .map(parseVaultKey);
}

export const GENERATED_VAULT_KEY_FILE = 'vault-key';

/** The settings that name the vault's keys: AppConfig's members of these names (AppConfig is one). */
export interface VaultKeySettings {
  vaultKey?: string;
  vaultKeyFile?: string;
  vaultKeyPrevious?: string;
  vaultKeyPreviousFile?: string;
  dataDir: string;
}

export interface VaultKeys {
  /** Wraps every new data key. */
  current: Buffer;
  /** Still unwrap data keys wrapped before a rotation; never wrap. */
  previous: Buffer[];
  /** Where the current key came from, for messages: a variable's name or a file's path, never the key. */
  source: string;
  /** The file the key was generated into by this call. */
  generated?: string;
}

/**
 * The vault's key-encryption keys: VAULT_KEY, else the file VAULT_KEY_FILE, else `<DATA_DIR>/vault-key`, generated
 * there (mode 0600) on first use, as the log signing key is. The generated file may hold older keys on the lines
 * after the first (`gatehouse vault rotate-key` puts them there); VAULT_KEY_PREVIOUS / VAULT_KEY_PREVIOUS_FILE give
 * older keys otherwise. Keys are never logged, nor put into an error message.
 */
export function resolveVaultKeys(config: VaultKeySettings, options: { generate?: boolean } = {}): VaultKeys {
  const previous = previousKeys(config);
  if (config.vaultKey !== undefined) return { current: parseVaultKey(config.vaultKey), previous, source: 'VAULT_KEY' };
  if (config.vaultKeyFile !== undefined) {
    return { current: readKeyFile(config.vaultKeyFile, 'VAULT_KEY_FILE')[0]!, previous, source: config.vaultKeyFile };
  }
  const file = generatedVaultKeyFile(config);
  try {
    const [current, ...older] = readKeyFile(file, file);
    return { current: current!, previous: [...older, ...previous], source: file };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || options.generate === false) throw error;
  }
  // As private as the database: made owner-only if missing, refused if others may write it (docs/security.md).
  preparePrivateDirectory(config.dataDir);
  const key = randomBytes(32);
  try {
    // 'wx': two processes starting together on one DATA_DIR keep the first one's key.
    writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    return { current: key, previous, source: file, generated: file };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const [current, ...older] = readKeyFile(file, file);
    return { current: current!, previous: [...older, ...previous], source: file };
  }
}

export function generatedVaultKeyFile(config: Pick<VaultKeySettings, 'dataDir'>): string {
  return join(config.dataDir, GENERATED_VAULT_KEY_FILE);
}

/**
 * `gatehouse vault rotate-key` where the key was generated: a new key on the first line of `<DATA_DIR>/vault-key`, the
 * older ones kept below it (they unwrap what is not re-wrapped yet). Written to a temporary file and renamed, so a
 * reader sees the old file or the new one, never half of one.
 */
export function rotateGeneratedVaultKey(config: VaultKeySettings): VaultKeys {
  if (config.vaultKey !== undefined || config.vaultKeyFile !== undefined) {
    throw new Error('the key-encryption key is given (VAULT_KEY or VAULT_KEY_FILE): give the new key there and the old one in VAULT_KEY_PREVIOUS');
  }
  preparePrivateDirectory(config.dataDir);
  const file = generatedVaultKeyFile(config);
  const existing = readKeyFile(file, file);
  const key = randomBytes(32);
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, [key, ...existing].map((k) => `${k.toString('base64')}\n`).join(''), { mode: 0o600, flag: 'wx' });
  renameSync(temporary, file);
  return { current: key, previous: [...existing, ...previousKeys(config)], source: file, generated: file };
}

function previousKeys(config: VaultKeySettings): Buffer[] {
  if (config.vaultKeyPrevious !== undefined) return parseVaultKeyList(config.vaultKeyPrevious);
  if (config.vaultKeyPreviousFile !== undefined) return readKeyFile(config.vaultKeyPreviousFile, 'VAULT_KEY_PREVIOUS_FILE');
  return [];
}

function readKeyFile(file: string, label: string): Buffer[] {
  const text = readFileSync(file, 'utf8');
  let keys: Buffer[];
  try {
    keys = parseVaultKeyList(text);
  } catch {
    keys = [];
  }
  if (keys.length === 0) throw new Error(`${label} (${file}) does not hold 32-byte keys (base64 or hex, one per line)`);
  return keys;
}
