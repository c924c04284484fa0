import { createPrivateKey, generateKeyPairSync, KeyObject } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { preparePrivateDirectory } from './private-directory';

// PKCS#8 DER of an Ed25519 private key: this fixed 16-byte header, then the 32-byte seed.
const PKCS8_ED25519_HEADER = Buffer.from('302e020100300506032b657004220420', 'hex');

/** An Ed25519 private key from PKCS#8 PEM, or from its 32-byte seed as base64 or hex; throws otherwise. */
export function parseSigningKey(text: string): KeyObject {
  const trimmed = text.trim();
  let key: KeyObject;
  if (trimmed.startsWith('-----BEGIN')) {
    key = createPrivateKey(trimmed);
  } else {
    const seed = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
    if (seed.length !== 32) throw new Error('not a 32-byte seed');
    key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_HEADER, seed]), format: 'der', type: 'pkcs8' });
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('not an Ed25519 key');
  return key;
}

export const GENERATED_KEY_FILE = 'log-signing-key.pem';

/** The settings that name the signing key: AppConfig's members of these names (AppConfig is one). */
export interface LogSigningKeySettings {
  logSigningKey?: string;
  logSigningKeyFile?: string;
  dataDir: string;
}

/**
 * The checkpoint signing key: LOG_SIGNING_KEY, else the file LOG_SIGNING_KEY_FILE, else `<DATA_DIR>/log-signing-key.pem`,
 * generated there (mode 0600) on first use. Processes that share DATA_DIR share the generated key; processes on
 * different hosts must be given one key (docs/audit-trail.md, "Verifying the audit trail").
 */
export function resolveLogSigningKey(config: LogSigningKeySettings, options: { generate?: boolean } = {}): { key: KeyObject; generated?: string } {
  if (config.logSigningKey !== undefined) return { key: parseSigningKey(config.logSigningKey) };
  if (config.logSigningKeyFile !== undefined) return { key: readKeyFile(config.logSigningKeyFile, 'LOG_SIGNING_KEY_FILE') };
  // The key is as private as the database: a DATA_DIR others may write is refused here too (with DATABASE_URL set).
  const file = join(preparePrivateDirectory(config.dataDir).path, GENERATED_KEY_FILE);
  try {
    return { key: readKeyFile(file, file) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || options.generate === false) throw error;
  }
  const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  try {
    // 'wx': two processes starting together on one DATA_DIR keep the first one's key.
    writeFileSync(file, pem, { mode: 0o600, flag: 'wx' });
    return { key: parseSigningKey(pem), generated: file };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { key: readKeyFile(file, file) };
  }
}

function readKeyFile(file: string, label: string): KeyObject {
  const text = readFileSync(file, 'utf8');
  try {
    return parseSigningKey(text);
  } catch {
    throw new Error(`${label} (${file}) does not hold an Ed25519 private key (PKCS#8 PEM, or the 32-byte seed as base64 or hex)`);
  }
}
