import { Page, PageQuery } from '../shared/page';
import { ChainHead } from './log-chain';
import { LogCheckpoint } from './log-signing';

/** The signed checkpoints over the chains' heads. */
export abstract class LogCheckpointRepository {
  /** The heads of every chain that has grown since its last checkpoint. */
  abstract headsToCheckpoint(limit: number): Promise<ChainHead[]>;
  /** Stores checkpoints; one already stored at the same (tenant, position) is kept. Returns how many were new. */
  abstract saveCheckpoints(checkpoints: LogCheckpoint[]): Promise<number>;
  /** The tenant's checkpoints with a position in (afterPosition, upTo], in position order, at most `limit`. */
  abstract checkpointSlice(tenantId: string, afterPosition: number, upTo: number, limit: number): Promise<LogCheckpoint[]>;
  /** Newest first (highest position first); the cursor is a position. */
  abstract listCheckpoints(tenantId: string, page: PageQuery): Promise<Page<LogCheckpoint>>;
}
