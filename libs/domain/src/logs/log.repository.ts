import { Page, PageQuery } from '../shared/page';
import { Log } from './log';
import { ChainHead } from './log-chain';

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

/** The stored logs, read: pages, chain slices and the chain's head (the writes are the LogChainWriter's). */
export abstract class LogRepository {
  /** Newest first (`created_at` desc, `id` desc), within one tenant. */
  abstract list(tenantId: string, filter: LogFilter, page: PageQuery): Promise<Page<Log>>;
  /** Up to `limit` logs of the tenant matching `filter` with a position in (afterPosition, upTo], in position order. */
  abstract chainSlice(tenantId: string, filter: LogFilter, afterPosition: number, upTo: number, limit: number): Promise<Log[]>;
  /** The tenant's chain head (position 0 and the genesis hash before its first log). */
  abstract chainHead(tenantId: string): Promise<ChainHead>;
  /** The highest position among the tenant's stored logs (0 without any), whatever the head says. */
  abstract highestPosition(tenantId: string): Promise<number>;
}
