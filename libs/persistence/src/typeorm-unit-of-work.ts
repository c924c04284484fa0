import { AsyncLocalStorage } from 'node:async_hooks';
import { DataSource, EntityManager } from 'typeorm';
import {
  AuditEvent,
  AuditEventPublisher,
  Clock,
  CommitObserver,
  newId,
  NewAuditEvent,
  PortToken,
  toAuditEvent,
  TransactionScope,
  UnitOfWork,
} from '@gatehouse/domain';
import { translateDatabaseError, translatingDatabaseErrors } from './database-errors';
import { AuditOutboxEntity } from './entities/audit-outbox.entity';

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

  register<T>(port: PortToken<T>, factory: (em: EntityManager) => T): this {
    this.factories.set(port, factory);
    return this;
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
      result = await this.dataSource.transaction((em) => ambientTransaction.run(em, async () => {
        const value = await work({
          get: (port) => this.registry.build(port, em),
          record: (event) => events.push(toAuditEvent(event, newId(), this.clock.now())),
        });
        if (events.length > 0) await em.getRepository(AuditOutboxEntity).insert(events.map(toOutboxRow));
        return value;
      }));
    } catch (error) {
      throw translateDatabaseError(error);
    }
    // Committed: deliver now. A failure here loses nothing, the outbox row is relayed later.
    if (events.length > 0) {
      this.publisher.publish(events).catch(this.onPublishError);
      await Promise.all(this.observers.map((observer) => observer.committed(events)));
    }
    return result;
  }

  /** A read's audit events: one INSERT on its own (atomic, durable when it returns), no BEGIN and COMMIT around it. */
  override async record(recorded: NewAuditEvent[]): Promise<void> {
    if (recorded.length === 0) return;
    const events = recorded.map((event) => toAuditEvent(event, newId(), this.clock.now()));
    try {
      await this.dataSource.getRepository(AuditOutboxEntity).insert(events.map(toOutboxRow));
    } catch (error) {
      throw translateDatabaseError(error);
    }
    this.publisher.publish(events).catch(this.onPublishError);
    await Promise.all(this.observers.map((observer) => observer.committed(events)));
  }
}

function toOutboxRow(event: AuditEvent): AuditOutboxEntity {
  return Object.assign(new AuditOutboxEntity(), event);
}
