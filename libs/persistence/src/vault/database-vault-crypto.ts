import { createCipheriv, createDecipheriv, createHmac, createSecretKey, KeyObject, randomBytes } from 'node:crypto';
import { VaultCrypto } from '@gatehouse/domain';
import { VaultKeyStore } from './vault-key-store';

const VERSION = 1;
const KEY_ID_AT = 1;
const IV_AT = KEY_ID_AT + 16;
const TAG_AT = IV_AT + 12;
const CIPHERTEXT_AT = TAG_AT + 16;

/** A sealed value that does not open: damaged, moved to another row, or another tenant's. Names no value. */
export class SealedValueError extends Error {
  override name = 'SealedValueError';
}

/** The data key id an envelope names (its bytes 1..16), checking the version and the length. */
export function envelopeKeyId(sealed: Buffer): string {
  if (sealed.length < CIPHERTEXT_AT || sealed[0] !== VERSION) throw new SealedValueError('not a sealed value of a known version');
  const hex = sealed.subarray(KEY_ID_AT, IV_AT).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The bytes an envelope starts with for a data key (version, key id): what SQL compares to find values under a key. */
export function envelopeHeader(keyId: string): Buffer {
  return Buffer.concat([Buffer.from([VERSION]), Buffer.from(keyId.replace(/-/g, ''), 'hex')]);
}

/**
 * VaultCrypto over the vault's keys (VaultKeyStore). Envelope: version byte (1), the data key's id (16 bytes), a random
 * 96-bit IV, the 128-bit GCM tag, the ciphertext. The GCM AAD is the version and key id followed by the caller's aad,
 * so neither the header nor the row it belongs to can be swapped.
 */
export class DatabaseVaultCrypto extends VaultCrypto {
  /** Each unwrapped data key as a KeyObject, made once (a cipher given raw bytes imports them on every call). */
  private readonly keyObjects = new WeakMap<Buffer, KeyObject>();

  constructor(readonly keys: VaultKeyStore) {
    super();
  }

  private keyObject(key: Buffer): KeyObject {
    let object = this.keyObjects.get(key);
    if (!object) {
      object = createSecretKey(key);
      this.keyObjects.set(key, object);
    }
    return object;
  }

  async seal(tenantId: string, plaintext: Buffer, aad: string): Promise<Buffer> {
    const { keyId, key } = await this.keys.currentKey(tenantId, 'data');
    const header = envelopeHeader(keyId);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keyObject(key), iv);
    cipher.setAAD(Buffer.concat([header, Buffer.from(aad)]));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([header, iv, cipher.getAuthTag(), ciphertext]);
  }

  async open(tenantId: string, sealed: Buffer, aad: string): Promise<Buffer> {
    const key = await this.keys.keyById(tenantId, envelopeKeyId(sealed), 'data');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.keyObject(key), sealed.subarray(IV_AT, TAG_AT));
      decipher.setAAD(Buffer.concat([sealed.subarray(0, IV_AT), Buffer.from(aad)]));
      decipher.setAuthTag(sealed.subarray(TAG_AT, CIPHERTEXT_AT));
      return Buffer.concat([decipher.update(sealed.subarray(CIPHERTEXT_AT)), decipher.final()]);
    } catch {
      throw new SealedValueError('a sealed value does not open: it was damaged or moved to another row');
    }
  }

  async fingerprint(tenantId: string, canonical: string): Promise<string> {
    const { key } = await this.keys.currentKey(tenantId, 'fingerprint');
    return createHmac('sha256', this.keyObject(key)).update(canonical).digest('base64url');
  }

  async lookupHash(secret: string): Promise<string> {
    const { key } = await this.keys.currentKey(null, 'lookup');
    return createHmac('sha256', this.keyObject(key)).update(secret).digest('base64url');
  }

  /** Whether this process's key-encryption keys unwrap the vault's keys: loads (or makes) the global lookup key. */
  async verifyKeys(): Promise<void> {
    await this.keys.currentKey(null, 'lookup');
  }
}
