import { Clock } from '../shared/clock';

/** How the logs are cut into partitions by `created_at` (UTC): `LOG_PARTITION_INTERVAL`. */
export type LogPartitionInterval = 'day' | 'week' | 'month';

/** One partition of the logs: the logs with `from <= created_at < to` (`from` null: everything before `to`). */
export interface LogPartition {
  name: string;
  from: Date | null;
  to: Date;
}

/**
 * The logs' time partitions (docs/audit-trail.md, "Time partitions"). Writers never need them created first: a write
 * whose `created_at` has no partition creates it (in the unit last recorded by `ensure`) and is written after.
 */
export abstract class LogPartitions {
  /**
   * Creates the partitions missing for [from, to), cut in `interval` (recorded as the unit of partitions created on
   * demand from then on); returns the names created.
   */
  abstract ensure(from: Date, to: Date, interval: LogPartitionInterval): Promise<string[]>;
  /** Every partition, oldest first. */
  abstract list(): Promise<LogPartition[]>;
  /**
   * Drops every partition whose range ends at or before `before`, with its logs (for retention: irrevocable, and
   * the chains then start after them); returns the names dropped. A partition straddling `before` is kept.
   */
  abstract dropBefore(before: Date): Promise<string[]>;
}

/** The worker's periodic task: the current partition and the next `ahead` ones exist, whatever the writers do. */
export class MaintainLogPartitions {
  constructor(
    private readonly partitions: LogPartitions,
    private readonly clock: Clock,
    private readonly interval: LogPartitionInterval,
    private readonly ahead = 2,
  ) {}

  /** How many partitions it created. */
  async execute(): Promise<number> {
    const now = this.clock.now();
    return (await this.partitions.ensure(now, addIntervals(now, this.interval, this.ahead + 1), this.interval)).length;
  }
}

/** `at` plus `n` days, weeks or months (UTC, end of month clamped as a calendar does). */
export function addIntervals(at: Date, interval: LogPartitionInterval, n: number): Date {
  const next = new Date(at.getTime());
  if (interval === 'day') next.setUTCDate(next.getUTCDate() + n);
  else if (interval === 'week') next.setUTCDate(next.getUTCDate() + 7 * n);
  else next.setUTCMonth(next.getUTCMonth() + n, Math.min(next.getUTCDate(), 28));
  return next;
}
