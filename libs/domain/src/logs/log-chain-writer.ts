import { AuditEvent } from './log';

/**
 * Log ids already stored under another tenant (a log's id is unique across tenants). Thrown by `append` and
 * `relayOutbox` after everything else was written: those logs are not written, not skipped as duplicates, and their
 * outbox rows stay. Names the ids only, never the tenant that holds them.
 */
export class LogIdConflictError extends Error {
  constructor(
    /** The logs not written: their id, and their own tenant. */
    readonly conflicts: readonly { id: string; tenantId: string }[],
    outcome = 'not written',
  ) {
    super(`log id(s) already stored under another tenant, ${outcome}: ${conflicts.map((c) => c.id).join(', ')}`);
    this.name = 'LogIdConflictError';
  }
}

/** Appends audit events to their tenants' hash chains: from the queue's jobs, and from the outbox (the relay). */
export abstract class LogChainWriter {
  /**
   * Writes the logs whose id is not there yet and removes the outbox rows of all of them, in one
   * transaction: delivering the same event twice (a retried job, two workers, the relay) adds nothing.
   * A duplicate is a stored log of the same id and the same tenant; an id stored (or earlier in `logs`) under
   * another tenant is a conflict: the other logs are written, then LogIdConflictError names the conflicting ids.
   * Each new log takes the next position of its tenant's hash chain, in the order given, under a lock on
   * that chain's head, so concurrent writers of one tenant extend it one after the other. Returns how many
   * rows were new.
   */
  abstract append(logs: AuditEvent[]): Promise<number>;
  /**
   * Moves up to `limit` outbox events recorded before `recordedBefore` into the logs, skipping rows
   * another relay holds; returns how many it took. An event whose id is stored under another tenant is left in the
   * outbox and not taken; once the backlog is taken (fewer than `limit`), LogIdConflictError names those events.
   */
  abstract relayOutbox(recordedBefore: Date, limit: number): Promise<number>;
}
