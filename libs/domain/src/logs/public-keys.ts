import { createHash, createPublicKey, KeyObject } from 'node:crypto';

/** A key's id: the first 16 hex digits of the SHA-256 of its raw 32-byte Ed25519 public key. */
export function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256').update(rawPublicKey(publicKey)).digest('hex').slice(0, 16);
}

export function rawPublicKey(publicKey: KeyObject): Buffer {
  // The SPKI DER of an Ed25519 key is a fixed 12-byte header followed by the 32 raw bytes.
  return publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
}

/** Reads a public key given as PEM (SPKI), or as the base64 / hex of its raw 32 bytes. */
export function parsePublicKey(text: string): KeyObject {
  const trimmed = text.trim();
  if (trimmed.startsWith('-----BEGIN')) return createPublicKey(trimmed);
  const raw = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (raw.length !== 32) throw new Error('a public key must be PEM, or 32 bytes as base64 or hex');
  const spkiHeader = Buffer.from('302a300506032b6570032100', 'hex');
  return createPublicKey({ key: Buffer.concat([spkiHeader, raw]), format: 'der', type: 'spki' });
}

/** The public keys a verifier accepts, by key id: the current signing key and the retired ones (keys rotate). */
export class PublicKeySet {
  private readonly byId = new Map<string, KeyObject>();

  constructor(keys: KeyObject | readonly KeyObject[]) {
    for (const key of Array.isArray(keys) ? keys : [keys as KeyObject]) this.byId.set(keyIdOf(key), key);
  }

  get(keyId: string): KeyObject | undefined {
    return this.byId.get(keyId);
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }
}
