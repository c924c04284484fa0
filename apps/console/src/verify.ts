import type { Log } from './api/client';

/**
 * The audit trail's verification in the browser, the same algorithm as `gatehouse logs verify`
 * (docs/audit-trail.md, "Verifying the audit trail"): positions 1, 2, 3, ... without gaps, each hash recomputed
 * from the log and the previous hash, each checkpoint's Ed25519 signature, and the recomputed hash at each checkpoint's position equal to the signed one.
 */
export interface Checkpoint {
  tenant_id: string;
  position: number;
  hash: string;
  signed_at: string;
  key_id: string;
  signature: string;
}

export type Verification =
  | { ok: true; logs: number; checkpoints: number; lastSigned: number; unsigned: number }
  | { ok: false; problem: string };

const encoder = new TextEncoder();

function bytesToHex(bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
}

function base64ToBytes(value: string): Uint8Array<ArrayBuffer> {
  const raw = atob(value);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

async function chainHash(previous: Uint8Array<ArrayBuffer>, log: Log, position: number): Promise<Uint8Array<ArrayBuffer>> {
  const fields: Array<string | undefined> = [
    'gatehouse.log.v1',
    log.tenant_id,
    String(position),
    log.id,
    log.created_at,
    log.actor_type,
    log.actor_id,
    log.entity_type,
    log.entity_id,
    log.operation,
    log.message,
    log.request_id,
    log.source_ip,
    log.user_agent,
  ];
  const parts = fields.map((f) => (f === undefined ? undefined : encoder.encode(f)));
  const size = parts.reduce((sum, p) => sum + 4 + (p?.length ?? 0), previous.length);
  const input = new Uint8Array(size);
  const view = new DataView(input.buffer);
  input.set(previous, 0);
  let at = previous.length;
  for (const part of parts) {
    // An absent field is FF FF FF FF, a length no UTF-8 field can have.
    view.setUint32(at, part === undefined ? 0xffffffff : part.length);
    at += 4;
    if (part) {
      input.set(part, at);
      at += part.length;
    }
  }
  return new Uint8Array(await crypto.subtle.digest('SHA-256', input));
}

/** `exportText`: the unfiltered NDJSON export (position order); checkpoints in any order; the raw public key, base64. */
export async function verifyTrail(exportText: string, checkpoints: Checkpoint[], publicKeyBase64: string): Promise<Verification> {
  const key = await crypto.subtle.importKey('raw', base64ToBytes(publicKeyBase64), { name: 'Ed25519' }, false, ['verify']);
  for (const c of checkpoints) {
    const message = encoder.encode(['gatehouse.checkpoint.v1', c.tenant_id, String(c.position), c.hash, c.signed_at].join('\n'));
    if (!(await crypto.subtle.verify({ name: 'Ed25519' }, key, base64ToBytes(c.signature), message))) {
      return { ok: false, problem: `The checkpoint at position ${c.position} (signed ${c.signed_at}) has a signature that does not verify.` };
    }
  }
  const byPosition = new Map(checkpoints.map((c) => [c.position, c]));
  let previous = new Uint8Array(32);
  let position = 0;
  let lastSigned = 0;
  for (const line of exportText.split('\n')) {
    if (!line) continue;
    const log = JSON.parse(line) as Log;
    position += 1;
    if (log.position !== position) return { ok: false, problem: `Position ${position} is missing (found ${log.position}): a log was deleted or moved.` };
    previous = await chainHash(previous, log, position);
    const hex = bytesToHex(previous.buffer);
    if (hex !== log.hash) return { ok: false, problem: `Log ${position} (${log.id}) does not match its hash: it was altered, inserted or moved.` };
    const checkpoint = byPosition.get(position);
    if (checkpoint) {
      if (checkpoint.hash !== hex) return { ok: false, problem: `The chain at position ${position} differs from its signed checkpoint: logs after ${lastSigned} were rewritten.` };
      lastSigned = position;
    }
  }
  const beyond = checkpoints.find((c) => c.position > position);
  if (beyond) return { ok: false, problem: `A checkpoint vouches for position ${beyond.position}, but the trail ends at ${position}: logs were removed.` };
  return { ok: true, logs: position, checkpoints: checkpoints.length, lastSigned, unsigned: position - lastSigned };
}
