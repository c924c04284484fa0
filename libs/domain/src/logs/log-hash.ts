import { hash } from 'node:crypto';
import { AuditEvent } from './log';

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
export const GENESIS_HASH = '0'.repeat(64);

/** The fields a log's hash covers, in their order, as text (absent: null). */
export function hashedFields(log: AuditEvent, position: number, createdAt = log.createdAt.toISOString()): (string | null)[] {
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
export function chainHash(previousHash: string, log: AuditEvent, position: number, createdAt = log.createdAt.toISOString()): string {
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
