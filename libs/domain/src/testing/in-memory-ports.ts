import { Application } from '../applications/application';
import { ApplicationExpiryScheduler } from '../applications/application-expiry';
import { ApplicationFilter, ApplicationRepository } from '../applications/application.repository';
import { AuditEventPublisher, toAuditEvent } from '../audit/audit-event';
import { Clock } from '../shared/clock';
import { ConflictError } from '../shared/domain-error';
import { newId } from '../shared/ids';
import { decodeCursor, Page, PageQuery, pageFromRows } from '../shared/page';
import { PortToken, TransactionScope, UnitOfWork } from '../shared/unit-of-work';
import type { RateLimit } from '../rate-limits/rate-counter';
import { Tenant } from '../tenants/tenant';
import { TenantRepository } from '../tenants/tenant.repository';
import { AuditEvent, Log } from '../logs/log';
import { ChainHead, chainedLog, chainLogs } from '../logs/log-chain';
import { LogChainWriter, LogIdConflictError } from '../logs/log-chain-writer';
import { LogCheckpointRepository } from '../logs/log-checkpoint.repository';
import { GENESIS_HASH } from '../logs/log-hash';
import { LogCheckpoint } from '../logs/log-signing';
import { LogFilter, LogRepository } from '../logs/log.repository';

/**
 * In-memory fakes of the domain's ports, for unit tests of use cases. They keep the adapters' observable
 * behaviour (tenant scoping, unique keys, newest-first paging, rollback of a failed unit of work), so a test
 * written against them means the same against PostgreSQL.
 */

/** A clock that stands still until told to move. */
export class FixedClock extends Clock {
  private current: number;

  constructor(start: Date | string = '2026-11-21T10:00:00.000Z') {
    super();
    this.current = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  set(instant: Date | string): void {
    this.current = new Date(instant).getTime();
  }

  advance(ms: number): Date {
    this.current += ms;
    return this.now();
  }
}

/** A fake whose state InMemoryUnitOfWork can take before a transaction and put back when it throws. */
export interface Snapshotting {
  snapshot(): unknown;
  restore(state: unknown): void;
}

function isSnapshotting(value: unknown): value is Snapshotting {
  const candidate = value as Partial<Snapshotting> | null;
  return typeof candidate?.snapshot === 'function' && typeof candidate.restore === 'function';
}

/** A fake that keeps its rows in an InMemoryTable: InMemoryUnitOfWork snapshots the table. */
export interface HoldsTable {
  readonly table: Snapshotting;
}

/** What InMemoryUnitOfWork snapshots of a registered fake: the fake itself, or the table it holds, or nothing. */
function snapshottingOf(value: unknown): Snapshotting | undefined {
  if (isSnapshotting(value)) return value;
  const table = (value as Partial<HoldsTable> | null)?.table;
  return isSnapshotting(table) ? table : undefined;
}

// Rows are copied in and out, as a database would: a caller mutating what it got changes nothing stored.
function copy<T>(value: T): T {
  return structuredClone(value);
}

/** Rows keyed by id, snapshot and restore included; feature fakes can extend it. */
export class InMemoryTable<T extends { id: string }> implements Snapshotting {
  rows = new Map<string, T>();

  all(): T[] {
    return [...this.rows.values()].map(copy);
  }

  snapshot(): unknown {
    return new Map([...this.rows].map(([id, row]) => [id, copy(row)]));
  }

  restore(state: unknown): void {
    this.rows = state as Map<string, T>;
  }
}

/** Newest first (`created_at` desc, then `id` desc), then the offset or keyset page, as applyKeysetPage does. */
export function pageInMemory<T extends { createdAt: Date; id: string }>(rows: T[], query: PageQuery): Page<T> {
  const ordered = [...rows].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  if (query.start !== undefined) {
    const cursor = decodeCursor(query.start);
    const after = ordered.filter((row) => {
      const at = row.createdAt.getTime() - cursor.createdAt.getTime();
      return at < 0 || (at === 0 && row.id < cursor.id);
    });
    return pageFromRows(after.slice(0, query.size + 1), query);
  }
  const offset = (query.page - 1) * query.size;
  return pageFromRows(ordered.slice(offset, offset + query.size + 1), query, ordered.length);
}

/**
 * The logs, their chains and checkpoints in memory, as the TypeORM log adapters keep them (no outbox: relayOutbox moves
 * nothing); one object for the three log ports.
 */
export class InMemoryLogRepository implements LogRepository, LogChainWriter, LogCheckpointRepository {
  readonly logs: Log[] = [];
  readonly heads = new Map<string, ChainHead>();
  readonly checkpoints: LogCheckpoint[] = [];

  async append(logs: AuditEvent[]): Promise<number> {
    const tenantOf = new Map(this.logs.map((l) => [l.id, l.tenantId]));
    const fresh: AuditEvent[] = [];
    const conflicts: { id: string; tenantId: string }[] = [];
    for (const log of logs) {
      const tenant = tenantOf.get(log.id);
      if (tenant === undefined) {
        tenantOf.set(log.id, log.tenantId);
        fresh.push(log);
      } else if (tenant !== log.tenantId) conflicts.push({ id: log.id, tenantId: log.tenantId });
    }
    const tenants = [...new Set(fresh.map((l) => l.tenantId))];
    const chained = chainLogs(await Promise.all(tenants.map((t) => this.chainHead(t))), fresh, chainedLog);
    for (const head of chained.heads) this.heads.set(head.tenantId, head);
    this.logs.push(...chained.chained);
    if (conflicts.length > 0) throw new LogIdConflictError(conflicts);
    return fresh.length;
  }

  async relayOutbox(_recordedBefore: Date, _limit: number): Promise<number> {
    return 0;
  }

  async list(tenantId: string, filter: LogFilter, page: PageQuery): Promise<Page<Log>> {
    return pageInMemory(this.matching(tenantId, filter), page);
  }

  async chainSlice(tenantId: string, filter: LogFilter, afterPosition: number, upTo: number, limit: number): Promise<Log[]> {
    return this.matching(tenantId, filter)
      .filter((l) => l.position > afterPosition && l.position <= upTo)
      .sort((a, b) => a.position - b.position)
      .slice(0, limit);
  }

  async chainHead(tenantId: string): Promise<ChainHead> {
    return this.heads.get(tenantId) ?? { tenantId, position: 0, hash: GENESIS_HASH };
  }

  async highestPosition(tenantId: string): Promise<number> {
    return Math.max(0, ...this.logs.filter((l) => l.tenantId === tenantId).map((l) => l.position));
  }

  async headsToCheckpoint(limit: number): Promise<ChainHead[]> {
    const signed = (tenantId: string) => Math.max(0, ...this.checkpoints.filter((c) => c.tenantId === tenantId).map((c) => c.position));
    return [...this.heads.values()].filter((h) => h.position > signed(h.tenantId)).slice(0, limit);
  }

  async saveCheckpoints(checkpoints: LogCheckpoint[]): Promise<number> {
    const fresh = checkpoints.filter((c) => !this.checkpoints.some((k) => k.tenantId === c.tenantId && k.position === c.position));
    this.checkpoints.push(...fresh);
    return fresh.length;
  }

  async checkpointSlice(tenantId: string, afterPosition: number, upTo: number, limit: number): Promise<LogCheckpoint[]> {
    return this.checkpoints
      .filter((c) => c.tenantId === tenantId && c.position > afterPosition && c.position <= upTo)
      .sort((a, b) => a.position - b.position)
      .slice(0, limit);
  }

  async listCheckpoints(tenantId: string, page: PageQuery): Promise<Page<LogCheckpoint>> {
    const mine = this.checkpoints.filter((c) => c.tenantId === tenantId).sort((a, b) => b.position - a.position);
    const offset = (page.page - 1) * page.size;
    return { items: mine.slice(offset, offset + page.size), size: page.size, page: page.page, totalItems: mine.length };
  }

  private matching(tenantId: string, filter: LogFilter): Log[] {
    return this.logs.filter(
      (l) =>
        l.tenantId === tenantId &&
        (filter.entityType === undefined || l.entityType === filter.entityType) &&
        (filter.entityId === undefined || l.entityId === filter.entityId) &&
        (filter.actorId === undefined || l.actorId === filter.actorId) &&
        (filter.requestId === undefined || l.requestId === filter.requestId) &&
        (filter.startDate === undefined || l.createdAt >= filter.startDate) &&
        (filter.endDate === undefined || l.createdAt < filter.endDate),
    );
  }
}

export class InMemoryApplicationRepository extends ApplicationRepository implements HoldsTable {
  readonly table = new InMemoryTable<Application>();

  all(): Application[] {
    return this.table.all();
  }

  private get rows(): Map<string, Application> {
    return this.table.rows;
  }

  async insert(app: Application): Promise<void> {
    if (this.rows.has(app.id)) throw new ConflictError('The resource conflicts with an existing one');
    this.assertUniqueKeyHash(app);
    this.rows.set(app.id, copy(app));
  }

  async update(app: Application): Promise<boolean> {
    const current = this.rows.get(app.id);
    if (!current || current.tenantId !== app.tenantId) return false;
    this.assertUniqueKeyHash(app);
    this.rows.set(app.id, copy(app));
    return true;
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const current = this.rows.get(id);
    if (!current || current.tenantId !== tenantId) return false;
    return this.rows.delete(id);
  }

  async findById(tenantId: string, id: string): Promise<Application | null> {
    const row = this.rows.get(id);
    return row && row.tenantId === tenantId ? copy(row) : null;
  }

  // One unit of work runs at a time here: nothing to lock.
  findByIdForChange(tenantId: string, id: string): Promise<Application | null> {
    return this.findById(tenantId, id);
  }

  async findByKeyHash(keyHash: string): Promise<Application | null> {
    const row = [...this.rows.values()].find((a) => a.keyHash === keyHash || a.previousKeyHash === keyHash);
    return row ? copy(row) : null;
  }

  async list(tenantId: string, filter: ApplicationFilter, page: PageQuery): Promise<Page<Application>> {
    const ids = filter.ids?.length ? new Set(filter.ids.map((id) => id.toLowerCase())) : undefined;
    const types = filter.types?.length ? new Set<string>(filter.types) : undefined;
    const rows = [...this.rows.values()].filter(
      (a) =>
        a.tenantId === tenantId &&
        (!ids || ids.has(a.id)) &&
        (!types || types.has(a.type)) &&
        (!filter.unusedSince || a.lastUsedAt === null || a.lastUsedAt < filter.unusedSince),
    );
    return pageInMemory(rows.map(copy), page);
  }

  async findExpired(now: Date, limit: number): Promise<Application[]> {
    return [...this.rows.values()]
      .filter((a) => a.expiresAt !== null && a.expiresAt.getTime() <= now.getTime())
      .sort((a, b) => a.expiresAt!.getTime() - b.expiresAt!.getTime())
      .slice(0, limit)
      .map(copy);
  }

  private assertUniqueKeyHash(app: Application): void {
    for (const other of this.rows.values()) {
      if (other.id !== app.id && other.keyHash === app.keyHash) throw new ConflictError('The resource conflicts with an existing one');
    }
  }
}

export class InMemoryTenantRepository extends TenantRepository implements HoldsTable {
  readonly table = new InMemoryTable<Tenant>();

  all(): Tenant[] {
    return this.table.all();
  }

  async insert(tenant: Tenant): Promise<void> {
    if (this.table.rows.has(tenant.id) || this.all().some((t) => t.name === tenant.name)) {
      throw new ConflictError('The resource conflicts with an existing one');
    }
    this.table.rows.set(tenant.id, copy(tenant));
  }

  async count(): Promise<number> {
    return this.table.rows.size;
  }

  async findById(id: string): Promise<Tenant | null> {
    const tenant = this.table.rows.get(id);
    return tenant ? copy(tenant) : null;
  }

  async findByName(name: string): Promise<Tenant | null> {
    return this.all().find((t) => t.name === name) ?? null;
  }

  async list(): Promise<Tenant[]> {
    return this.all().sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
  }

  async setDefaultRateLimit(id: string, limit: RateLimit | null): Promise<boolean> {
    const tenant = this.table.rows.get(id);
    if (!tenant) return false;
    tenant.defaultRateLimit = limit ? { ...limit } : null;
    return true;
  }

  async setLogRetention(id: string, days: number | null): Promise<boolean> {
    const tenant = this.table.rows.get(id);
    if (!tenant) return false;
    tenant.logRetentionDays = days;
    return true;
  }
}

/** Remembers every audit event it is handed (after commit), in order. */
export class RecordingAuditEventPublisher extends AuditEventPublisher {
  readonly published: AuditEvent[] = [];

  async publish(events: AuditEvent[]): Promise<void> {
    this.published.push(...events);
  }
}

/** Remembers every expiry it was asked to schedule. */
export class RecordingExpiryScheduler extends ApplicationExpiryScheduler {
  readonly scheduled: { id: string; tenantId: string; expiresAt: Date | null }[] = [];

  async schedule(app: { id: string; tenantId: string; expiresAt: Date | null }): Promise<void> {
    this.scheduled.push({ id: app.id, tenantId: app.tenantId, expiresAt: app.expiresAt });
  }
}

/**
 * A unit of work over registered fakes. Like TypeormUnitOfWork: the recorded events become committed (the
 * outbox) only when the work resolves, then go to the publisher; when it throws, every Snapshotting fake is
 * put back as it was and nothing is recorded.
 */
export class InMemoryUnitOfWork extends UnitOfWork {
  /** The outbox: every event of every committed unit of work, in order. */
  readonly events: AuditEvent[] = [];
  private readonly repositories = new Map<PortToken<unknown>, unknown>();

  constructor(
    private readonly clock: Clock = new FixedClock(),
    private readonly publisher?: AuditEventPublisher,
  ) {
    super();
  }

  register<T>(port: PortToken<T>, repository: T): this {
    this.repositories.set(port, repository);
    return this;
  }

  async run<T>(work: (tx: TransactionScope) => Promise<T>): Promise<T> {
    const fakes = [...this.repositories.values()].map(snapshottingOf).filter((fake) => fake !== undefined);
    const snapshots = fakes.map((fake) => fake.snapshot());
    const pending: AuditEvent[] = [];
    const scope: TransactionScope = {
      get: <R>(port: PortToken<R>): R => {
        if (!this.repositories.has(port)) throw new Error(`No repository registered for ${port.name}`);
        return this.repositories.get(port) as R;
      },
      record: (event) => pending.push(toAuditEvent(event, newId(), this.clock.now())),
    };
    let result: T;
    try {
      result = await work(scope);
    } catch (error) {
      fakes.forEach((fake, i) => fake.restore(snapshots[i]));
      throw error;
    }
    this.events.push(...pending);
    if (pending.length > 0) await this.publisher?.publish(pending);
    return result;
  }
}

/** The fakes a use case of applications or tenants needs, wired together. */
export function inMemoryPorts(clock: FixedClock = new FixedClock()) {
  const applications = new InMemoryApplicationRepository();
  const tenants = new InMemoryTenantRepository();
  const publisher = new RecordingAuditEventPublisher();
  const uow = new InMemoryUnitOfWork(clock, publisher).register(ApplicationRepository, applications).register(TenantRepository, tenants);
  return { clock, applications, tenants, publisher, uow, expiry: new RecordingExpiryScheduler() };
}
