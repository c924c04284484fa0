/** A data key as stored: wrapped by the key-encryption key named `kekId`. */
export interface WrappedKey {
  kekId: string;
  wrapped: Buffer;
}

/**
 * The key-encryption key (KEK) as a port: it wraps and unwraps the vault's data keys and never hands itself out, so a
 * KMS (AWS KMS Encrypt/Decrypt with an encryption context, Vault transit) can replace the local key. `context` binds a
 * wrapped key to its row (key id, tenant, purpose): a wrapped key copied to another row does not unwrap.
 * Implementations never log, trace or put into an error message a key or a plaintext data key.
 */
export abstract class KeyWrapper {
  /** The id of the KEK that `wrap` uses now (stored beside each wrapped key). */
  abstract currentKekId(): Promise<string>;
  abstract wrap(key: Buffer, context: string): Promise<WrappedKey>;
  /** Throws VaultKeyError when the KEK named by `kekId` is unknown here or does not unwrap. */
  abstract unwrap(key: WrappedKey, context: string): Promise<Buffer>;
}

/** A vault key that cannot be used: an unknown or wrong key-encryption key, a missing data key. Says which, never a key. */
export class VaultKeyError extends Error {
  override name = 'VaultKeyError';
}
