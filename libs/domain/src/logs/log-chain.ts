import { AuditEvent, Log } from './log';
import { chainHash } from './log-hash';

/** The head of a tenant's chain: its last position (0 before the first log) and that log's hash. */
export interface ChainHead {
  tenantId: string;
  position: number;
  hash: string;
}

/**
 * The one chaining of logs (the database's writer and the in-memory fake alike): numbers and hashes `events` after
 * `heads` (one per tenant of the events, in any order), in the order given, without changing them. `make` builds what
 * the caller keeps of each log, given its position, its hash and its `created_at` as the hash covered it. Returns
 * those, and the heads after them in the order of `heads`.
 */
export function chainLogs<T>(
  heads: readonly ChainHead[],
  events: readonly AuditEvent[],
  make: (event: AuditEvent, position: number, hash: string, createdAt: string) => T,
): { chained: T[]; heads: ChainHead[] } {
  const next = new Map<string, ChainHead>(heads.map((h) => [h.tenantId, { ...h }]));
  const chained = events.map((event) => {
    const head = next.get(event.tenantId);
    if (head === undefined) throw new Error(`no chain head given for tenant ${event.tenantId}`);
    // Once per log: the hash covers `created_at` as the row stores it.
    const createdAt = event.createdAt.toISOString();
    head.position += 1;
    head.hash = chainHash(head.hash, event, head.position, createdAt);
    return make(event, head.position, head.hash, createdAt);
  });
  return { chained, heads: heads.map((h) => next.get(h.tenantId)!) };
}

/** `event` in its chain: the Log it becomes (a `make` of chainLogs). */
export function chainedLog(event: AuditEvent, position: number, hash: string): Log {
  return { ...event, position, hash };
}
