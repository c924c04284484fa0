import { createHash, createPublicKey, hash, KeyObject, sign, verify } from 'node:crypto';
import { ChainedLog, Log } from './log';

/**
 * The per-tenant hash chain over the logs (docs/audit-trail.md, "Verifying the audit trail"): the log at position n has
 *
 *   hash(n) = SHA-256( hash(n-1) || field(tag) || field(tenant_id) || field(n) || field(id) || field(created_at)
 *                      || field(actor_type) || field(actor_id) || field(entity_type) || field(entity_id)
 *                      || field(operation) || field(message) || field(request_id) || field(source_ip) || field(user_agent) )
 *
 * with hash(0) = 32 zero bytes, field(v) = the 4-byte big-endian length of v's UTF-8 bytes then those bytes, and
 * field(absent) = FF FF FF FF. Length prefixes make the encoding unambiguous without any escaping rules, so a
 * verifier in any language (or in SQL: the migration defines `log_chain_hash`, the same function) gets the same bytes.
 */
export const LOG_HASH_TAG = 'gatehouse.log.v1';
export const CHECKPOINT_TAG = 'gatehouse.checkpoint.v1';
export const GENESIS_HASH = '0'.repeat(64);

/** The fields a log's hash covers, in their order, as text (absent: null). */
export function hashedFields(log: Log, position: number, createdAt = log.createdAt.toISOString()): (string | null)[] {
  return [
    LOG_HASH_TAG,
    log.tenantId,
    String(position),
    log.id,
    createdAt,
    log.actorType ?? null,
    log.actorId ?? null,
    log.entityType,
    log.entityId,
    log.operation,
    log.message,
    log.requestId ?? null,
    log.sourceIp ?? null,
    log.userAgent ?? null,
  ];
}

/** Where chainHash lays out its input; grown when a log needs more. */
let scratch = Buffer.allocUnsafe(4096);

/**
 * hash(n) from hash(n-1) and the log at position n, both hex; `createdAt` is the log's `created_at` as
 * `toISOString()` gives it, for a caller that has it already. The writer hashes every ingested log: the whole input
 * is laid out in one reused buffer and hashed in one call that returns hex (a Buffer result cost more than the hash
 * itself: each one is a new backing store).
 */
export function chainHash(previousHash: string, log: Log, position: number, createdAt = log.createdAt.toISOString()): string {
  const values = hashedFields(log, position, createdAt);
  // A UTF-16 code unit takes at most 3 bytes of UTF-8: room for every field without measuring it first.
  let room = 32;
  for (const value of values) room += 4 + (value === null ? 0 : 3 * value.length);
  if (scratch.length < room) scratch = Buffer.allocUnsafe(Math.max(room, 2 * scratch.length));
  const input = scratch;
  let at = input.write(previousHash, 0, 32, 'hex');
  for (const value of values) {
    if (value === null) {
      // An absent field is FF FF FF FF, a length no UTF-8 field can have.
      at = input.writeUInt32BE(0xffffffff, at);
      continue;
    }
    const length = input.write(value, at + 4, 'utf8');
    input.writeUInt32BE(length, at);
    at += 4 + length;
  }
  return hash('sha256', input.subarray(0, at), 'hex');
}

/** The head of a tenant's chain: its last position (0 before the first log) and that log's hash. */
export interface ChainHead {
  tenantId: string;
  position: number;
  hash: string;
}

/** Gives each log its position and hash after `head`, in the order given; returns the new head. */
export function extendChain(head: ChainHead, logs: Log[]): ChainHead {
  let position = head.position;
  let previous = head.hash;
  for (const log of logs) {
    position += 1;
    previous = chainHash(previous, log, position);
    log.position = position;
    log.hash = previous;
  }
  return { tenantId: head.tenantId, position, hash: previous };
}

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
  return Buffer.from(
    [CHECKPOINT_TAG, checkpoint.tenantId, String(checkpoint.position), checkpoint.hash, checkpoint.signedAt.toISOString()].join('\n'),
    'utf8',
  );
}

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

  constructor(private readonly loadPrivateKey: () => KeyObject) {}

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

export interface InvalidLog {
  /** The position where the chain first fails; `id` is absent when no log is there (deleted, truncated). */
  position: number;
  id?: string;
  reason: string;
}

export interface InvalidCheckpoint {
  position: number;
  signedAt: string;
  reason: string;
}

export interface ChainVerification {
  tenantId: string;
  /** True when every log verifies and every checkpoint is genuine and matches the chain. */
  valid: boolean;
  logs: number;
  head: { position: number; hash: string };
  checkpoints: number;
  /** The newest checkpoint that is genuine and matches: every log up to it is proven unaltered. */
  lastVerifiedCheckpoint?: { position: number; signedAt: string };
  /** Logs after the newest checkpoint: chained, not yet signed (the next checkpoint will cover them). */
  unsignedLogs: number;
  firstInvalidLog?: InvalidLog;
  invalidCheckpoints: InvalidCheckpoint[];
}

/**
 * Verifies one tenant's chain as its logs stream past, in position order, in constant memory: every log's
 * hash is recomputed from its content and its predecessor's hash, positions must run 1, 2, 3 ... without gaps,
 * and at each checkpoint's position the recomputed hash must be the signed one. Someone who rewrites a log and
 * recomputes every later hash (a database superuser can) still cannot make the signed checkpoints match: the
 * logs after the last matching checkpoint are then the first that do not verify.
 */
export class ChainVerifier {
  private position = 0;
  private hash = GENESIS_HASH;
  private readonly pending: LogCheckpoint[] = [];
  private lastGood?: LogCheckpoint;
  /** Id of the first log after the last matching checkpoint: where an undetectable-by-hash rewrite begins. */
  private firstAfterGood?: string;
  private firstInvalid?: InvalidLog;
  private readonly invalidCheckpoints: InvalidCheckpoint[] = [];
  private count = 0;
  private matched = 0;

  private readonly keyId: string;

  constructor(
    private readonly tenantId: string,
    private readonly publicKey: KeyObject,
  ) {
    this.keyId = keyIdOf(publicKey);
  }

  /**
   * Checkpoints to hold the chain against, given before the logs they cover are fed (all at once, or batch by
   * batch in position order); each one's signature is checked here.
   */
  addCheckpoints(checkpoints: LogCheckpoint[]): void {
    for (const checkpoint of checkpoints) {
      const bad = (reason: string) =>
        this.invalidCheckpoints.push({ position: checkpoint.position, signedAt: checkpoint.signedAt.toISOString(), reason });
      if (checkpoint.tenantId !== this.tenantId) bad(`belongs to tenant ${checkpoint.tenantId}`);
      else if (checkpoint.keyId !== this.keyId) bad(`signed by key ${checkpoint.keyId}, not by the given key ${this.keyId}`);
      else if (!checkpointSignatureValid(checkpoint, this.publicKey)) bad('signature does not verify: the checkpoint was forged or altered');
      else if (checkpoint.position <= this.position) bad(`given after the logs it covers were verified`);
      else this.pending.push(checkpoint);
    }
    this.pending.sort((a, b) => a.position - b.position);
  }

  /** Feeds the next log; false once the chain has failed (nothing after the first failure is meaningful). */
  add(log: ChainedLog): boolean {
    if (this.firstInvalid) return false;
    const expected = this.position + 1;
    this.count += 1;
    if (log.tenantId !== this.tenantId) return this.fail({ position: log.position, id: log.id, reason: `belongs to tenant ${log.tenantId}` });
    if (log.position !== expected) {
      if (log.position < expected) return this.fail({ position: log.position, id: log.id, reason: `position ${log.position} appears twice (a log was inserted)` });
      return this.fail({ position: expected, reason: `no log at position ${expected} (a log was deleted); the next is position ${log.position}, id ${log.id}` });
    }
    const hash = chainHash(this.hash, log, expected);
    if (hash !== log.hash) {
      return this.fail({ position: expected, id: log.id, reason: 'its content or its predecessor does not match its hash (altered, inserted or reordered)' });
    }
    this.position = expected;
    this.hash = hash;
    this.firstAfterGood ??= log.id;
    return this.checkCheckpointsAt(log.id);
  }

  /** Ends the stream: checkpoints beyond the last log mean logs were removed from the end. */
  finish(): ChainVerification {
    if (!this.firstInvalid && this.pending.length > 0) {
      const beyond = this.pending[this.pending.length - 1]!;
      this.fail({
        position: this.position + 1,
        reason: `the chain ends at position ${this.position} but a checkpoint signed at ${beyond.signedAt.toISOString()} covers position ${beyond.position}: logs were removed from the end`,
      });
    }
    const lastCheckpointed = this.lastGood?.position ?? 0;
    return {
      tenantId: this.tenantId,
      valid: !this.firstInvalid && this.invalidCheckpoints.length === 0,
      logs: this.count,
      head: { position: this.position, hash: this.hash },
      checkpoints: this.invalidCheckpoints.length + this.pending.length + this.matched,
      lastVerifiedCheckpoint: this.lastGood ? { position: this.lastGood.position, signedAt: this.lastGood.signedAt.toISOString() } : undefined,
      unsignedLogs: this.firstInvalid ? 0 : this.position - lastCheckpointed,
      firstInvalidLog: this.firstInvalid,
      invalidCheckpoints: this.invalidCheckpoints,
    };
  }

  private checkCheckpointsAt(id: string): boolean {
    while (this.pending.length > 0 && this.pending[0]!.position === this.position) {
      const checkpoint = this.pending.shift()!;
      if (checkpoint.hash !== this.hash) {
        const from = (this.lastGood?.position ?? 0) + 1;
        return this.fail({
          position: from,
          id: from === this.position ? id : this.firstAfterGood,
          reason:
            `the logs from position ${from} to ${this.position} do not match the checkpoint signed at ${checkpoint.signedAt.toISOString()}: ` +
            'one of them was altered, inserted, removed or reordered and the later hashes recomputed',
        });
      }
      this.matched += 1;
      this.lastGood = checkpoint;
      this.firstAfterGood = undefined;
    }
    return true;
  }

  private fail(invalid: InvalidLog): false {
    this.firstInvalid ??= invalid;
    return false;
  }
}
