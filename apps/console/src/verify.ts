import type { Checkpoint, Log } from './api/client';

/**
 * The audit trail's verification in the browser, the same algorithm as `gatehouse logs verify`
 * (docs/audit-trail.md, "Verifying the audit trail"): positions 1, 2, 3, ... without gaps, each hash recomputed
 * from the log and the previous hash, each checkpoint's Ed25519 signature, and the recomputed hash at each checkpoint's position equal to the signed one.
 * Where retention removed the oldest logs, the trail starts after its signed anchor (GET /logs/retention-anchor); keys
 * rotate, so each signature is checked with the key its `key_id` names among those given (GET /logs/public-keys).
 */
export type Verification =
  { ok: true; logs: number; checkpoints: number; lastSigned: number; unsigned: number; anchor?: number } | { ok: false; problem: string };

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

/** A key's id: the first 16 hex digits of the SHA-256 of its raw 32 bytes (as the service names it). */
async function keyIdOf(raw: Uint8Array<ArrayBuffer>): Promise<string> {
  return bytesToHex(await crypto.subtle.digest('SHA-256', raw)).slice(0, 16);
}

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/**
 * `exportText`: the unfiltered NDJSON export (position order); checkpoints in any order; the raw public keys, base64
 * (one, or the current and retired ones); `anchor`: the tenant's retention anchor, when retention removed logs.
 */
export async function verifyTrail(
  exportText: string,
  checkpoints: Checkpoint[],
  publicKeysBase64: string | string[],
  anchor?: Checkpoint | null,
): Promise<Verification> {
  const keys = new Map<string, CryptoKey>();
  for (const base64 of Array.isArray(publicKeysBase64) ? publicKeysBase64 : [publicKeysBase64]) {
    const raw = base64ToBytes(base64);
    keys.set(await keyIdOf(raw), await crypto.subtle.importKey('raw', raw, { name: 'Ed25519' }, false, ['verify']));
  }
  // One key given: it verifies whatever id a signature names (what this verifier always did).
  const keyOf = (id: string) => keys.get(id) ?? (keys.size === 1 ? [...keys.values()][0] : undefined);
  const genuine = async (tag: string, c: Checkpoint) => {
    const key = keyOf(c.key_id);
    const message = encoder.encode([tag, c.tenant_id, String(c.position), c.hash, c.signed_at].join('\n'));
    return key !== undefined && (await crypto.subtle.verify({ name: 'Ed25519' }, key, base64ToBytes(c.signature), message));
  };
  if (anchor && !(await genuine('gatehouse.retention.v1', anchor))) {
    return { ok: false, problem: `The retention anchor at position ${anchor.position} (signed ${anchor.signed_at}) has a signature that does not verify.` };
  }
  const start = anchor?.position ?? 0;
  checkpoints = checkpoints.filter((c) => c.position > start);
  for (const c of checkpoints) {
    if (!(await genuine('gatehouse.checkpoint.v1', c))) {
      return { ok: false, problem: `The checkpoint at position ${c.position} (signed ${c.signed_at}) has a signature that does not verify.` };
    }
  }
  const byPosition = new Map(checkpoints.map((c) => [c.position, c]));
  let previous = anchor ? hexToBytes(anchor.hash) : new Uint8Array(32);
  let position = start;
  let lastSigned = start;
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
      if (checkpoint.hash !== hex)
        return { ok: false, problem: `The chain at position ${position} differs from its signed checkpoint: logs after ${lastSigned} were rewritten.` };
      lastSigned = position;
    }
  }
  const beyond = checkpoints.find((c) => c.position > position);
  if (beyond) return { ok: false, problem: `A checkpoint vouches for position ${beyond.position}, but the trail ends at ${position}: logs were removed.` };
  return {
    ok: true,
    logs: position - start,
    checkpoints: checkpoints.length,
    lastSigned,
    unsigned: position - lastSigned,
    ...(anchor ? { anchor: start } : {}),
  };
}
