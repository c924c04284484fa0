import { AsyncLocalStorage } from 'node:async_hooks';
import { DataSource, EntityManager } from 'typeorm';
import {
  AuditEvent,
  AuditEventPublisher,
  Clock,
  CommitObserver,
  ConflictError,
  Inserting,
  newId,
  NewAuditEvent,
  PortToken,
  toAuditEvent,
  TransactionScope,
  UnitOfWork,
} from '@gatehouse/domain';
import { translateDatabaseError, translatingDatabaseErrors } from './database-errors';
import { GroupBatch } from './group-batch';
import { BatchInsert, GroupedInsert } from './grouped-insert';
import { insertOutboxRows } from './outbox-rows';

/**
 * The transaction a call runs in, for adapters that are not handed one: the vault reads its keys through it, since an
 * embedded database has a single connection (another would wait for this transaction forever), and a PostgreSQL pool
 * whose every connection is in a transaction waiting for a key would wait as long.
 */
export const ambientTransaction = new AsyncLocalStorage<EntityManager>();

type RepositoryFactory = (em: EntityManager) => unknown;

/** Which adapter implements each repository port; features register theirs next to their adapter. */
export class RepositoryRegistry {
  private readonly factories = new Map<PortToken<unknown>, RepositoryFactory>();
  private readonly batchInserts = new Map<PortToken<unknown>, BatchInsert<unknown>>();

  register<T>(port: PortToken<T>, factory: (em: EntityManager) => T): this {
    this.factories.set(port, factory);
    return this;
  }

  /** How the port's rows go in many at once (UnitOfWork.insert); a port without one inserts in a transaction. */
  registerBatchInsert<R>(port: PortToken<Inserting<R>>, insert: BatchInsert<R>): this {
    this.batchInserts.set(port, insert as BatchInsert<unknown>);
    return this;
  }

  batchInsert<R>(port: PortToken<Inserting<R>>): BatchInsert<R> | undefined {
    return this.batchInserts.get(port) as BatchInsert<R> | undefined;
  }

  build<T>(port: PortToken<T>, em: EntityManager): T {
    const factory = this.factories.get(port);
    if (!factory) throw new Error(`No repository registered for ${port.name}`);
    return translatingDatabaseErrors(factory(em) as T & object);
  }

  get ports(): PortToken<unknown>[] {
    return [...this.factories.keys()];
  }
}

export class TypeormUnitOfWork extends UnitOfWork {
  /** Reads' audit events of concurrent requests, committed together (see record). */
  private readonly recorded = new GroupBatch<AuditEvent[], void>((batches) => this.insertRecorded(batches), 200);
  /** Creates of concurrent requests, by port, committed together (see insert). */
  private readonly inserts = new Map<PortToken<unknown>, GroupedInsert<unknown>>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly registry: RepositoryRegistry,
    private readonly publisher: AuditEventPublisher,
    private readonly clock: Clock,
    private readonly onPublishError: (error: unknown) => void = () => undefined,
    private readonly observers: CommitObserver[] = [],
  ) {
    super();
  }

  async run<T>(work: (tx: TransactionScope) => Promise<T>): Promise<T> {
    const events: AuditEvent[] = [];
    let result: T;
    try {
      result = await this.dataSource.transaction((em) =>
        ambientTransaction.run(em, async () => {
          const value = await work({
            get: (port) => this.registry.build(port, em),
            record: (event) => events.push(toAuditEvent(event, newId(), this.clock.now())),
          });
          if (events.length > 0) await insertOutboxRows(em, events);
          return value;
        }),
      );
    } catch (error) {
      throw translateDatabaseError(error);
    }
    if (events.length > 0) await this.committed(events);
    return result;
  }

  /** Committed: deliver now. A failure here loses nothing, the outbox row is relayed later. */
  private async committed(events: AuditEvent[]): Promise<void> {
    this.publisher.publish(events).catch(this.onPublishError);
    await Promise.all(this.observers.map((observer) => observer.committed(events)));
  }

  /** One statement for the row and its events, shared with concurrent creates of the same port (GroupedInsert). */
  override async insert<R>(port: PortToken<Inserting<R>>, row: R, recorded: NewAuditEvent[]): Promise<void> {
    let grouped = this.inserts.get(port) as GroupedInsert<R> | undefined;
    if (!grouped) {
      const spec = this.registry.batchInsert(port);
      if (!spec) return super.insert(port, row, recorded);
      grouped = new GroupedInsert(this.dataSource, spec, (events) => this.committed(events));
      this.inserts.set(port, grouped as GroupedInsert<unknown>);
    }
    const events = recorded.map((event) => toAuditEvent(event, newId(), this.clock.now()));
    if (!(await grouped.insert(row, events))) throw new ConflictError('The resource conflicts with an existing one');
  }

  /**
   * A read's audit events: one INSERT on its own (atomic, durable when it returns), no BEGIN and COMMIT around it;
   * the events of reads running at the same time go in the same INSERT (group commit: one round trip for many).
   */
  override async record(recorded: NewAuditEvent[]): Promise<void> {
    if (recorded.length === 0) return;
    const events = recorded.map((event) => toAuditEvent(event, newId(), this.clock.now()));
    await this.recorded.add(events);
  }

  private async insertRecorded(batches: AuditEvent[][]): Promise<void[]> {
    const events = batches.flat();
    try {
      await insertOutboxRows(this.dataSource.manager, events);
    } catch (error) {
      throw translateDatabaseError(error);
    }
    await this.committed(events);
    return batches.map(() => undefined);
  }
}
