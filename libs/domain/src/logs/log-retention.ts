import { Actor, NewAuditEvent, SYSTEM_ACTOR } from '../audit/audit-event';
import { Clock } from '../shared/clock';
import { FieldErrorCollector, NotFoundError } from '../shared/domain-error';
import { UnitOfWork } from '../shared/unit-of-work';
import { TenantRepository } from '../tenants/tenant.repository';
import { ChainHead } from './log-chain';
import { CheckpointSigner } from './log-signing';
import { RetentionAnchor, signRetentionAnchor } from './retention-anchor';

/** The longest retention period a tenant may set: 100 years. */
export const MAX_LOG_RETENTION_DAYS = 36_500;

/** One tenant's logs in one partition, as retention reads them (under a lock) before dropping the partition. */
export interface PartitionLogs {
  tenantId: string;
  /** Its lowest and highest positions in the partition, and how many of its logs the partition holds. */
  first: number;
  last: number;
  count: number;
  /** The hash of its log at `last`. */
  lastHash: string;
  /** The tenant's own retention period; null: none, LOG_RETENTION_DAYS applies. */
  days: number | null;
  /** The position of its newest retention anchor (0: none). */
  anchored: number;
}

/** Retention's view of the logs: which tenants have a period, how far their oldest logs may go, and the removal. */
export abstract class LogRetentionRepository {
  /**
   * Every tenant with a retention period (days), by tenant id: its own, else `defaultDays` (LOG_RETENTION_DAYS) when
   * given.
   */
  abstract tenantsWithRetention(defaultDays?: number): Promise<{ tenantId: string; days: number }[]>;
  /**
   * Inside the caller's transaction: a lock on the tenant's retention, false when another retention run holds it
   * (that run removes the same logs: this one skips the tenant) or a partition is being dropped (`lockPartitions`).
   */
  abstract lockTenant(tenantId: string): Promise<boolean>;
  /**
   * The last log of the longest run of the tenant's oldest logs (at most `limit`, in position order) all created
   * before `before` and continuing its newest anchor without a hole: retention removes a prefix of the chain, never a
   * log behind a newer one, and never covers a position removed outside retention. Undefined when there is none.
   */
  abstract lastRemovable(tenantId: string, before: Date, limit: number): Promise<ChainHead | undefined>;
  /** Stores the anchor and removes the tenant's logs up to its position (the database refuses any other removal). */
  abstract remove(anchor: RetentionAnchor): Promise<number>;
  /** Stores the anchor only (the logs it covers go with their partition). */
  abstract saveAnchor(anchor: RetentionAnchor): Promise<void>;
  /**
   * Inside the caller's transaction, before a partition is dropped: false when a retention batch runs (or another
   * drop); else no batch starts, and no partition is created, until the transaction ends.
   */
  abstract lockPartitions(): Promise<boolean>;
  /** Inside the caller's transaction: no log can be written to the partition any more; its logs, per tenant. */
  abstract partitionLogs(partition: string): Promise<PartitionLogs[]>;
  /** The tenant's newest anchor: where its retained trail starts. */
  abstract newestAnchor(tenantId: string): Promise<RetentionAnchor | undefined>;
}

/** A retention period, checked: a whole number of days from 1 to MAX_LOG_RETENTION_DAYS, or null (none of its own). */
export function validateLogRetentionDays(days: unknown, field = 'log_retention_days'): number | null {
  const errors = new FieldErrorCollector();
  if (days !== null && (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > MAX_LOG_RETENTION_DAYS)) {
    errors.add(field, `must be a whole number of days from 1 to ${MAX_LOG_RETENTION_DAYS}, or null (no period of its own)`);
  }
  errors.throwIfAny();
  return days as number | null;
}

/**
 * A tenant's log retention period (`gatehouse tenant retention`, `PUT /tenant/settings`): logs older than it are
 * removed by the worker, behind a signed retention anchor. null: none of its own (LOG_RETENTION_DAYS applies, else
 * they are kept forever). Audited as a tenant update.
 */
export class SetLogRetention {
  constructor(
    private readonly uow: UnitOfWork,
    /** LOG_RETENTION_DAYS: what applies to a tenant without a period of its own (undefined: kept forever). */
    readonly defaultDays?: number,
  ) {}

  async execute(tenantId: string, days: number | null, actor: Actor = SYSTEM_ACTOR): Promise<number | null> {
    const checked = validateLogRetentionDays(days);
    await this.uow.run(async (tx) => {
      const tenants = tx.get(TenantRepository);
      const tenant = await tenants.findById(tenantId);
      if (!tenant || !(await tenants.setLogRetention(tenantId, checked))) throw new NotFoundError('Tenant');
      tx.record({
        tenantId,
        actor,
        entityType: 'tenant',
        entityId: tenantId,
        operation: 'update',
        message: `Tenant '${tenant.name}' log retention set to ${this.describe(checked)} (was ${this.describe(tenant.logRetentionDays ?? null)})`,
      });
    });
    return checked;
  }

  /** A tenant's period in words: its own, else the installation's default, else forever. */
  describe(days: number | null): string {
    if (days !== null) return `${days} day(s)`;
    return this.defaultDays === undefined ? 'forever' : `the default of ${this.defaultDays} day(s)`;
  }
}

/**
 * The worker's periodic retention: for every tenant with a period, its logs older than it go, in bounded batches, each
 * in one transaction that first stores a signed retention anchor (position and hash of the last log removed) and
 * records an audit log of the removal. Several workers may run it at once: a tenant is handled by one at a time.
 */
export class ApplyLogRetention {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly retention: LogRetentionRepository,
    private readonly signer: CheckpointSigner,
    private readonly clock: Clock,
    /** LOG_RETENTION_DAYS: the period of a tenant without one of its own (undefined: kept forever). */
    private readonly defaultDays?: number,
    /** Drops whole partitions first (DropExpiredLogPartitions, with LOG_RETENTION_DAYS). */
    private readonly partitions?: { execute(): Promise<number> },
  ) {}

  /** Returns how many logs it removed. */
  async execute(batchSize = 5000, maxBatchesPerTenant = 20): Promise<number> {
    // A drop that failed (its lock not taken in time, say) leaves the batches to run, then is reported.
    let failed: { error: unknown } | undefined;
    let removed = this.partitions ? await this.partitions.execute().catch((error: unknown) => ((failed = { error }), 0)) : 0;
    for (const { tenantId, days } of await this.retention.tenantsWithRetention(this.defaultDays)) {
      const before = new Date(this.clock.now().getTime() - days * 86_400_000);
      for (let batch = 0; batch < maxBatchesPerTenant; batch++) {
        const n = await this.removeBatch(tenantId, days, before, batchSize);
        removed += n;
        if (n < batchSize) break;
      }
    }
    if (failed) throw failed.error;
    return removed;
  }

  private removeBatch(tenantId: string, days: number, before: Date, batchSize: number): Promise<number> {
    return this.uow.run(async (tx) => {
      const retention = tx.get(LogRetentionRepository);
      if (!(await retention.lockTenant(tenantId))) return 0;
      const last = await retention.lastRemovable(tenantId, before, batchSize);
      if (!last) return 0;
      const anchor = signRetentionAnchor(this.signer, { tenantId, position: last.position, hash: last.hash, signedAt: this.clock.now() });
      const removed = await retention.remove(anchor);
      tx.record(retentionRemoval(anchor, days, removed));
      return removed;
    });
  }
}

/** The audit log of a removal by retention (a batch, or a dropped partition's logs of one tenant). */
export function retentionRemoval(anchor: RetentionAnchor, days: number, removed: number, partition?: string): NewAuditEvent {
  return {
    tenantId: anchor.tenantId,
    actor: SYSTEM_ACTOR,
    entityType: 'tenant',
    entityId: anchor.tenantId,
    operation: 'delete',
    message:
      `Audit logs up to position ${anchor.position} removed by the retention period of ${days} day(s) (${removed} log(s)` +
      `${partition ? `, with partition ${partition}` : ''}); retention anchor signed with key ${anchor.keyId}`,
  };
}

/** `GET /logs/retention-anchor`: where the caller's tenant's retained trail starts, if retention removed any log. */
export class GetRetentionAnchor {
  constructor(private readonly retention: LogRetentionRepository) {}

  execute(tenantId: string): Promise<RetentionAnchor | undefined> {
    return this.retention.newestAnchor(tenantId);
  }
}
