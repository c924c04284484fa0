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

export abstract class LogRepository {
  /**
   * Writes the logs whose id is not there yet and removes the outbox rows of all of them, in one
   * transaction: delivering the same event twice (a retried job, two workers, the relay) adds nothing.
   * Each new log takes the next position of its tenant's hash chain, in the order given, under a lock on
   * that chain's head, so concurrent writers of one tenant extend it one after the other. Returns how many
   * rows were new.
   */
  abstract append(logs: Log[]): Promise<number>;
  /**
   * Moves up to `limit` outbox events recorded before `recordedBefore` into the logs, skipping rows
   * another relay holds; returns how many it took.
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
