import { createPublicKey, KeyObject, sign, verify } from 'node:crypto';
import { keyIdOf } from './public-keys';

/** A public key a verifier may need: the signing key (`current`), or one rotated out whose signatures still stand. */
export interface SigningPublicKey {
  keyId: string;
  publicKey: KeyObject;
  current: boolean;
}

export const CHECKPOINT_TAG = 'gatehouse.checkpoint.v1';

/** A signed statement that a tenant's chain had `hash` at `position` at `signedAt`. */
export interface LogCheckpoint {
  tenantId: string;
  position: number;
  hash: string;
  signedAt: Date;
  /** Which key signed (see `keyIdOf`). */
  keyId: string;
  /** Ed25519 over `checkpointMessage`, base64. */
  signature: string;
}

/** The exact bytes a checkpoint's signature covers: five lines joined by LF, no trailing newline. */
export function checkpointMessage(checkpoint: Omit<LogCheckpoint, 'signature' | 'keyId'>): Buffer {
  return Buffer.from([CHECKPOINT_TAG, checkpoint.tenantId, String(checkpoint.position), checkpoint.hash, checkpoint.signedAt.toISOString()].join('\n'), 'utf8');
}

export function checkpointSignatureValid(checkpoint: LogCheckpoint, publicKey: KeyObject): boolean {
  try {
    return verify(null, checkpointMessage(checkpoint), publicKey, Buffer.from(checkpoint.signature, 'base64'));
  } catch {
    return false;
  }
}

/** Signs checkpoints with the service's Ed25519 key, loaded on first use (a process that never signs or serves it needs none). */
export class CheckpointSigner {
  private loaded?: { privateKey: KeyObject; publicKey: KeyObject; keyId: string };

  /** `retiredPublicKeys`: the public keys of earlier signing keys (LOG_SIGNING_RETIRED_KEYS): keys rotate. */
  constructor(
    private readonly loadPrivateKey: () => KeyObject,
    private readonly retiredPublicKeys: readonly KeyObject[] = [],
  ) {}

  /** The current public key first, then the retired ones (GET /logs/public-keys). */
  publicKeys(): SigningPublicKey[] {
    const current = { keyId: this.keyId, publicKey: this.publicKey, current: true };
    const retired = this.retiredPublicKeys.map((publicKey) => ({ keyId: keyIdOf(publicKey), publicKey, current: false }));
    return [current, ...retired.filter((k) => k.keyId !== current.keyId)];
  }

  get publicKey(): KeyObject {
    return this.key().publicKey;
  }

  get keyId(): string {
    return this.key().keyId;
  }

  /** Base64 Ed25519 signature of `message`. */
  sign(message: Buffer): string {
    return sign(null, message, this.key().privateKey).toString('base64');
  }

  private key(): { privateKey: KeyObject; publicKey: KeyObject; keyId: string } {
    if (!this.loaded) {
      const privateKey = this.loadPrivateKey();
      const publicKey = createPublicKey(privateKey);
      this.loaded = { privateKey, publicKey, keyId: keyIdOf(publicKey) };
    }
    return this.loaded;
  }
}
