import { AuditEvent, chainHash, GENESIS_HASH } from '@gatehouse/domain';
import type { ReceivedRecord } from './http-receivers';

export interface ChainCheck {
  /** Distinct positions received, in order of first arrival. */
  positions: number[];
  /** Records received again (a batch sent twice: its acknowledgement was lost). */
  duplicates: number;
  /** Problems: a gap, a record out of chain order, a hash that does not recompute, a repeat that differs. */
  problems: string[];
}

function asLog(r: ReceivedRecord): AuditEvent {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    actorId: (r.actor_id as string | undefined) ?? null,
    actorType: (r.actor_type as AuditEvent['actorType'] | undefined) ?? null,
    entityType: r.entity_type as string,
    entityId: r.entity_id as string,
    operation: r.operation as AuditEvent['operation'],
    message: r.message,
    createdAt: new Date(r.created_at as string),
    ...(r.request_id === undefined ? {} : { requestId: r.request_id as string }),
    ...(r.source_ip === undefined ? {} : { sourceIp: r.source_ip as string }),
    ...(r.user_agent === undefined ? {} : { userAgent: r.user_agent as string }),
  };
}

/**
 * What a receiver checks with nothing but the records: they arrive in chain order from `from` (a batch sent again may
 * repeat positions it already had, never skip one), and each hash recomputes from the previous one and the record's
 * fields (README, "Verifying the audit trail"). `previousHash`: the hash before `from` (genesis from position 1).
 */
export function checkChain(records: ReceivedRecord[], from = 1, previousHash = GENESIS_HASH): ChainCheck {
  const seen = new Map<number, string>();
  const positions: number[] = [];
  const problems: string[] = [];
  let duplicates = 0;
  let next = from;
  let prev = previousHash;
  for (const record of records) {
    if (record.position < next) {
      duplicates++;
      if (seen.get(record.position) !== record.hash) problems.push(`position ${record.position} repeated with another hash`);
      continue;
    }
    if (record.position > next) {
      problems.push(`gap: position ${record.position} arrived while ${next} was expected`);
      next = record.position;
    }
    const expected = chainHash(prev, asLog(record), record.position, record.created_at as string);
    if (expected !== record.hash) problems.push(`position ${record.position}: the hash does not recompute`);
    seen.set(record.position, record.hash);
    positions.push(record.position);
    prev = record.hash;
    next++;
  }
  return { positions, duplicates, problems };
}
