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
import { GroupBatch } from './group-batch';

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
  /** Reads' audit events of concurrent requests, committed together (see record). */
  private readonly recorded = new GroupBatch<AuditEvent[], void>((batches) => this.insertRecorded(batches), 200);

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
        if (events.length > 0) await insertOutboxRows(em, events);
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
    this.publisher.publish(events).catch(this.onPublishError);
    await Promise.all(this.observers.map((observer) => observer.committed(events)));
    return batches.map(() => undefined);
  }
}

/** The outbox's columns, their SQL array types and the event's fields, for one INSERT of any number of rows. */
const OUTBOX_COLUMNS: ReadonlyArray<readonly [column: string, field: keyof AuditEvent, type: string]> = [
  ['id', 'id', 'uuid'],
  ['tenant_id', 'tenantId', 'uuid'],
  ['actor_id', 'actorId', 'uuid'],
  ['actor_type', 'actorType', 'varchar'],
  ['entity_type', 'entityType', 'varchar'],
  ['entity_id', 'entityId', 'varchar'],
  ['operation', 'operation', 'varchar'],
  ['message', 'message', 'text'],
  ['created_at', 'createdAt', 'timestamptz'],
  ['request_id', 'requestId', 'varchar'],
  ['source_ip', 'sourceIp', 'varchar'],
  ['user_agent', 'userAgent', 'varchar'],
];

/** The events' outbox rows, by one statement with one parameter per column (the same text whatever the number of rows). */
async function insertOutboxRows(em: EntityManager, events: AuditEvent[]): Promise<void> {
  await em.query(INSERT_OUTBOX_ROWS, OUTBOX_COLUMNS.map(([, field]) => events.map((event) => event[field] ?? null)));
}

const INSERT_OUTBOX_ROWS = `INSERT INTO audit_outbox (${OUTBOX_COLUMNS.map(([column]) => column).join(', ')})
  SELECT * FROM unnest(${OUTBOX_COLUMNS.map(([, , type], i) => `$${i + 1}::${type}[]`).join(', ')})`;
