import { Clock } from '../shared/clock';
import { UnitOfWork } from '../shared/unit-of-work';
import { LogPartition, LogPartitions } from './log-partitions';
import { LogRetentionRepository, PartitionLogs, retentionRemoval } from './log-retention';
import { CheckpointSigner } from './log-signing';
import { signRetentionAnchor } from './retention-anchor';

const DAY_MS = 86_400_000;

/**
 * LOG_RETENTION_DAYS by whole partitions (docs/audit-trail.md, "Retention and its anchor"): the oldest partition goes
 * when its whole range is older than the retention of every tenant with logs in it (a tenant's own period, else
 * `defaultDays`) and, for each of those tenants, its logs there are exactly the start of its retained chain (positions
 * anchor + 1 … last, none elsewhere). In one transaction: a retention anchor signed for each tenant at its last log
 * there, its audit log, then the drop; a drop that cannot take its lock rolls the anchors back. Oldest first, stopping
 * at the first partition that must stay: the rest of its logs are for the per-tenant batches.
 */
export class DropExpiredLogPartitions {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly signer: CheckpointSigner,
    private readonly clock: Clock,
    private readonly defaultDays: number,
    private readonly maxPartitions = 12,
  ) {}

  /** Returns how many logs went with the partitions it dropped. */
  async execute(): Promise<number> {
    let removed = 0;
    for (let i = 0; i < this.maxPartitions; i++) {
      const n = await this.dropOldest();
      if (n === undefined) break;
      removed += n;
    }
    return removed;
  }

  /** The logs removed with the oldest partition, or undefined when there is none it may drop now. */
  private dropOldest(): Promise<number | undefined> {
    return this.uow.run(async (tx) => {
      const now = this.clock.now();
      const retention = tx.get(LogRetentionRepository);
      // Exclusive of every retention batch, and of partitions being created (none can appear before the oldest).
      if (!(await retention.lockPartitions())) return undefined;
      const [oldest] = await tx.get(LogPartitions).list();
      if (!oldest || !this.expired(oldest, this.defaultDays, now)) return undefined;
      const tenants = await retention.partitionLogs(oldest.name);
      if (!tenants.every((t) => this.expired(oldest, t.days ?? this.defaultDays, now) && isChainStart(t))) return undefined;
      for (const t of tenants) {
        const anchor = signRetentionAnchor(this.signer, { tenantId: t.tenantId, position: t.last, hash: t.lastHash, signedAt: now });
        await retention.saveAnchor(anchor);
        tx.record(retentionRemoval(anchor, t.days ?? this.defaultDays, t.count, oldest.name));
      }
      await tx.get(LogPartitions).dropBefore(oldest.to);
      return tenants.reduce((sum, t) => sum + t.count, 0);
    });
  }

  private expired(partition: LogPartition, days: number, now: Date): boolean {
    return partition.to.getTime() <= now.getTime() - days * DAY_MS;
  }
}

/**
 * The tenant's logs in the partition are the first of its retained chain, without a hole: dropping them removes a
 * prefix, covered by the anchor at `last`. A log of a lower position elsewhere (another service's `created_at` put it
 * in a later partition), a position missing (a log removed outside retention, which verification must still report),
 * or one kept by an older anchor's gap keeps the partition.
 */
export function isChainStart(t: PartitionLogs): boolean {
  return t.first === t.anchored + 1 && t.count === t.last - t.first + 1;
}
