import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { VaultCrypto } from '../vault/vault-crypto';

/**
 * A working VaultCrypto for unit tests: one random AES-256-GCM key and one HMAC key per tenant, kept in memory.
 * Envelope: 1 byte version (1), 12 bytes IV, 16 bytes tag, ciphertext.
 */
export class InMemoryVaultCrypto extends VaultCrypto {
  private readonly keys = new Map<string, { data: Buffer; mac: Buffer }>();
  private readonly lookupKey = randomBytes(32);

  private keysOf(tenantId: string): { data: Buffer; mac: Buffer } {
    let keys = this.keys.get(tenantId);
    if (!keys) {
      keys = { data: randomBytes(32), mac: randomBytes(32) };
      this.keys.set(tenantId, keys);
    }
    return keys;
  }

  async seal(tenantId: string, plaintext: Buffer, aad: string): Promise<Buffer> {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keysOf(tenantId).data, iv);
    cipher.setAAD(Buffer.from(aad));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([Buffer.from([1]), iv, cipher.getAuthTag(), ciphertext]);
  }

  async open(tenantId: string, sealed: Buffer, aad: string): Promise<Buffer> {
    if (sealed[0] !== 1 || sealed.length < 29) throw new Error('not a sealed value');
    const decipher = createDecipheriv('aes-256-gcm', this.keysOf(tenantId).data, sealed.subarray(1, 13));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(sealed.subarray(13, 29));
    return Buffer.concat([decipher.update(sealed.subarray(29)), decipher.final()]);
  }

  async fingerprint(tenantId: string, canonical: string): Promise<string> {
    return createHmac('sha256', this.keysOf(tenantId).mac).update(canonical).digest('base64url');
  }

  async lookupHash(secret: string): Promise<string> {
    return createHmac('sha256', this.lookupKey).update(secret).digest('base64url');
  }
}
