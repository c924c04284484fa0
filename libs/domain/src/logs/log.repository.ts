import { Page, PageQuery } from '../shared/page';
import { Log } from './log';

export interface LogFilter {
  entityType?: string;
  entityId?: string;
  /** Inclusive. */
  startDate?: Date;
  /** Exclusive. */
  endDate?: Date;
}

export abstract class LogRepository {
  /**
   * Writes the logs whose id is not there yet and removes the outbox rows of all of them, in one
   * transaction: delivering the same event twice (a retried job, two workers, the relay) adds nothing.
   * Returns how many rows were new.
   */
  abstract append(logs: Log[]): Promise<number>;
  /**
   * Moves up to `limit` outbox events recorded before `recordedBefore` into the logs, skipping rows
   * another relay holds; returns how many it took.
   */
  abstract relayOutbox(recordedBefore: Date, limit: number): Promise<number>;
  /** Newest first (`created_at` desc, `id` desc), within one tenant. */
  abstract list(tenantId: string, filter: LogFilter, page: PageQuery): Promise<Page<Log>>;
}
