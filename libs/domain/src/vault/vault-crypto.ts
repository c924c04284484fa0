/**
 * The vault's cryptography as a port (issue 24, CONTRACT section 12): what the token vault, proxy configurations and
 * proxy keys need to keep data encrypted at rest, without knowing where keys live.
 *
 * - `seal` encrypts under the tenant's current data key (AES-256-GCM, a fresh 96-bit IV each time). The result is a
 *   self-describing envelope (format version, data key id, IV, tag, ciphertext) so that `open` needs nothing else and
 *   data keys can be rotated while old envelopes stay readable. `aad` binds a ciphertext to where it is stored (for
 *   example `token:<tenant>:<id>`): an envelope copied to another row does not open.
 * - `fingerprint` is keyed (HMAC-SHA-256 under a per-tenant key), so a database dump cannot confirm a guessed value;
 *   the same tenant and input always give the same fingerprint, another tenant a different one.
 * - `lookupHash` is a keyed hash for finding a secret (a proxy key) by equality without storing it; it is global (not
 *   per tenant) because the lookup happens before the tenant is known.
 *
 * Implementations never log, trace or put into an error message a plaintext, a data key or a key-encryption key.
 */
export abstract class VaultCrypto {
  abstract seal(tenantId: string, plaintext: Buffer, aad: string): Promise<Buffer>;
  abstract open(tenantId: string, sealed: Buffer, aad: string): Promise<Buffer>;
  abstract fingerprint(tenantId: string, canonical: string): Promise<string>;
  abstract lookupHash(secret: string): Promise<string>;
}
