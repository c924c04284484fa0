import { verify } from 'node:crypto';
import { CheckpointSigner, LogCheckpoint } from './log-signing';
import { PublicKeySet } from './public-keys';

export const RETENTION_TAG = 'gatehouse.retention.v1';

/**
 * A signed statement that a tenant's logs up to `position` were removed by retention, the last of them having had
 * `hash`: the anchor a verifier starts the retained trail from (docs/audit-trail.md, "Retention and its anchor"). The
 * fields of a checkpoint; its signature covers a message of its own tag, so neither passes for the other.
 */
export type RetentionAnchor = LogCheckpoint;

/** The exact bytes an anchor's signature covers: five lines joined by LF, no trailing newline (its own tag). */
export function retentionAnchorMessage(anchor: Omit<RetentionAnchor, 'signature' | 'keyId'>): Buffer {
  return Buffer.from([RETENTION_TAG, anchor.tenantId, String(anchor.position), anchor.hash, anchor.signedAt.toISOString()].join('\n'), 'utf8');
}

export function signRetentionAnchor(signer: CheckpointSigner, anchor: Omit<RetentionAnchor, 'signature' | 'keyId'>): RetentionAnchor {
  return { ...anchor, keyId: signer.keyId, signature: signer.sign(retentionAnchorMessage(anchor)) };
}

/** Why the anchor cannot be trusted, or undefined when its signature verifies under one of `keys`. */
export function retentionAnchorProblem(anchor: RetentionAnchor, tenantId: string, keys: PublicKeySet): string | undefined {
  if (anchor.tenantId !== tenantId) return `the retention anchor belongs to tenant ${anchor.tenantId}`;
  const key = keys.get(anchor.keyId);
  if (!key) return `the retention anchor is signed by key ${anchor.keyId}, which is not among the given keys (${keys.ids().join(', ')})`;
  try {
    if (verify(null, retentionAnchorMessage(anchor), key, Buffer.from(anchor.signature, 'base64'))) return undefined;
  } catch {
    // a malformed signature is a signature that does not verify
  }
  return 'the retention anchor signature does not verify: it was forged or altered';
}
