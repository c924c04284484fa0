import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { KeyWrapper, VaultKeyError, WrappedKey } from '@gatehouse/domain';
import type { VaultKeys } from '@gatehouse/config';

interface Kek {
  id: string;
  wrappingKey: Buffer;
}

/** The id stored beside each wrapped key: derived from the KEK (one way), so it names a key without revealing it. */
export function kekIdOf(kek: Buffer): string {
  return `local-${createHmac('sha256', kek).update('gatehouse vault key-encryption key id').digest('hex').slice(0, 16)}`;
}

function kekOf(key: Buffer): Kek {
  // A key of its own for wrapping (HKDF), so the KEK's only direct use is naming itself.
  const wrappingKey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'gatehouse vault key wrapping', 32));
  return { id: kekIdOf(key), wrappingKey };
}

/**
 * The local key-encryption key (VAULT_KEY, VAULT_KEY_FILE or the generated `<DATA_DIR>/vault-key`) and the older
 * ones of a rotation. Wrapped form: 12-byte IV, 16-byte GCM tag, the encrypted key; the context is the GCM AAD.
 * The keys are resolved on first use, and again when a wrapped key names a KEK this process does not have yet
 * (another process rotated a generated key file).
 */
export class LocalKeyWrapper extends KeyWrapper {
  private ring?: { current: Kek; byId: Map<string, Kek> };
  /** Where the current key came from (a variable's name or a file), and the file it was generated into, if it was. */
  source?: { from: string; generated?: string };

  constructor(private readonly resolve: () => VaultKeys) {
    super();
  }

  /** Re-reads the keys on next use (after `vault rotate-key` wrote a new generated key). */
  reload(): void {
    this.ring = undefined;
  }

  private keys(): { current: Kek; byId: Map<string, Kek> } {
    if (!this.ring) {
      const keys = this.resolve();
      this.source = { from: keys.source, ...(keys.generated ? { generated: keys.generated } : {}) };
      const current = kekOf(keys.current);
      this.ring = { current, byId: new Map([current, ...keys.previous.map(kekOf)].map((k) => [k.id, k])) };
    }
    return this.ring;
  }

  async currentKekId(): Promise<string> {
    return this.keys().current.id;
  }

  async wrap(key: Buffer, context: string): Promise<WrappedKey> {
    const kek = this.keys().current;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', kek.wrappingKey, iv);
    cipher.setAAD(Buffer.from(context));
    const encrypted = Buffer.concat([cipher.update(key), cipher.final()]);
    return { kekId: kek.id, wrapped: Buffer.concat([iv, cipher.getAuthTag(), encrypted]) };
  }

  async unwrap({ kekId, wrapped }: WrappedKey, context: string): Promise<Buffer> {
    let kek = this.keys().byId.get(kekId);
    if (!kek) {
      this.reload();
      kek = this.keys().byId.get(kekId);
    }
    if (!kek) {
      throw new VaultKeyError(
        `a vault data key is wrapped by key-encryption key ${kekId}, which this process does not have (it has ${[...this.keys().byId.keys()].join(', ')}): ` +
          'give it that key as VAULT_KEY (or in VAULT_KEY_PREVIOUS during a rotation)',
      );
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', kek.wrappingKey, wrapped.subarray(0, 12));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(wrapped.subarray(12, 28));
      return Buffer.concat([decipher.update(wrapped.subarray(28)), decipher.final()]);
    } catch {
      throw new VaultKeyError(`a vault data key does not unwrap under key-encryption key ${kekId}: the stored key was damaged or moved`);
    }
  }
}
