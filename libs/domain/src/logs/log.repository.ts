import { Page, PageQuery } from '../shared/page';
import { ChainedLog, Log } from './log';
import { ChainHead, LogCheckpoint } from './log-chain';

export interface LogFilter {
  entityType?: string;
  entityId?: string;
  actorId?: string;
  requestId?: string;
  /** Inclusive. */
  startDate?: Date;
  /** Exclusive. */
  endDate?: Date;
}

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

export abstract class LogRepository {
  /**
   * Writes the logs whose id is not there yet and removes the outbox rows of all of them, in one
   * transaction: delivering the same event twice (a retried job, two workers, the relay) adds nothing.
   * A duplicate is a stored log of the same id and the same tenant; an id stored (or earlier in `logs`) under
   * another tenant is a conflict: the other logs are written, then LogIdConflictError names the conflicting ids.
   * Each new log takes the next position of its tenant's hash chain, in the order given, under a lock on
   * that chain's head, so concurrent writers of one tenant extend it one after the other. Returns how many
   * rows were new.
   */
  abstract append(logs: Log[]): Promise<number>;
  /**
   * Moves up to `limit` outbox events recorded before `recordedBefore` into the logs, skipping rows
   * another relay holds; returns how many it took. An event whose id is stored under another tenant is left in the
   * outbox and not taken; once the backlog is taken (fewer than `limit`), LogIdConflictError names those events.
   */
  abstract relayOutbox(recordedBefore: Date, limit: number): Promise<number>;
  /** Newest first (`created_at` desc, `id` desc), within one tenant. */
  abstract list(tenantId: string, filter: LogFilter, page: PageQuery): Promise<Page<ChainedLog>>;
  /** Up to `limit` logs of the tenant matching `filter` with a position in (afterPosition, upTo], in position order. */
  abstract chainSlice(tenantId: string, filter: LogFilter, afterPosition: number, upTo: number, limit: number): Promise<ChainedLog[]>;
  /** The tenant's chain head (position 0 and the genesis hash before its first log). */
  abstract chainHead(tenantId: string): Promise<ChainHead>;
  /** The highest position among the tenant's stored logs (0 without any), whatever the head says. */
  abstract highestPosition(tenantId: string): Promise<number>;
  /** The heads of every chain that has grown since its last checkpoint. */
  abstract headsToCheckpoint(limit: number): Promise<ChainHead[]>;
  /** Stores checkpoints; one already stored at the same (tenant, position) is kept. Returns how many were new. */
  abstract saveCheckpoints(checkpoints: LogCheckpoint[]): Promise<number>;
  /** The tenant's checkpoints with a position in (afterPosition, upTo], in position order, at most `limit`. */
  abstract checkpointSlice(tenantId: string, afterPosition: number, upTo: number, limit: number): Promise<LogCheckpoint[]>;
  /** Newest first (highest position first); the cursor is a position. */
  abstract listCheckpoints(tenantId: string, page: PageQuery): Promise<Page<LogCheckpoint>>;
}
