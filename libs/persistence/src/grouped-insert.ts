import { DataSource } from 'typeorm';
import { AuditEvent } from '@gatehouse/domain';
import { translateDatabaseError } from './database-errors';
import { GroupBatch } from './group-batch';
import { OUTBOX_COLUMNS } from './outbox-rows';

/** How a port's new rows are inserted many at once (see UnitOfWork.insert and GroupedInsert). */
export interface BatchInsert<R> {
  /**
   * One INSERT of any number of rows that skips a row whose key exists (`ON CONFLICT DO NOTHING`) and returns each
   * inserted row's key as `key` (text); its parameters are $1..$n, the same text whatever the number of rows.
   */
  readonly sql: string;
  parameters(rows: R[]): unknown[];
  /** A row's key, as the statement's RETURNING spells it. */
  key(row: R): string;
}

interface PendingInsert {
  row: unknown;
  events: AuditEvent[];
}

/** An item's outcome: inserted, refused as a duplicate key, or failed (its own statement failed). */
type Outcome = 'inserted' | 'duplicate' | { error: unknown };

/**
 * Group commit for creates: the rows concurrent requests insert into one table go, with their audit events, as one
 * statement (`WITH inserted AS (INSERT ... RETURNING key) INSERT INTO audit_outbox ... WHERE key IN inserted`), an
 * autocommit of its own: one round trip and one WAL flush for all, where a transaction each took four round trips
 * and a flush each. Atomic per row: a row's events are written if and only if the row is. A statement that fails
 * for another reason than a duplicate key (a value the column refuses, an outage) is retried row by row, so one
 * request's bad value fails only that request.
 */
export class GroupedInsert<R> {
  private readonly batch: GroupBatch<PendingInsert, Outcome>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly spec: BatchInsert<R>,
    /** Called with the events of the rows a statement inserted, once it has committed. */
    private readonly committed: (events: AuditEvent[]) => Promise<void>,
    maxBatch = 200,
  ) {
    this.batch = new GroupBatch((items) => this.insertAll(items), maxBatch);
  }

  /** Resolves true once the row and its events are durable; false, writing nothing, when its key exists. */
  async insert(row: R, events: AuditEvent[]): Promise<boolean> {
    const outcome = await this.batch.add({ row, events });
    if (typeof outcome === 'object') throw outcome.error;
    return outcome === 'inserted';
  }

  private async insertAll(items: PendingInsert[]): Promise<Outcome[]> {
    try {
      return await this.insertTogether(items);
    } catch (error) {
      if (items.length === 1) return [{ error: translateDatabaseError(error) }];
      return Promise.all(items.map(async (item) => (await this.insertAll([item]))[0] as Outcome));
    }
  }

  private async insertTogether(items: PendingInsert[]): Promise<Outcome[]> {
    // Two rows of one key in one statement: the first may go in, a later one is a duplicate whatever happens.
    const seen = new Set<string>();
    const keys = items.map((item) => this.spec.key(item.row as R));
    const unique = items.filter((_, i) => !seen.has(keys[i] as string) && Boolean(seen.add(keys[i] as string)));
    const rows = unique.map((item) => item.row as R);
    const rowParameters = this.spec.parameters(rows);
    const events = unique.flatMap((item) => item.events.map((event) => ({ event, key: this.spec.key(item.row as R) })));
    const eventParameters = OUTBOX_COLUMNS.map(([, field]) => events.map(({ event }) => event[field] ?? null));
    const returned: { key: string }[] = await this.dataSource.query(this.statement(rowParameters.length), [
      ...rowParameters,
      ...eventParameters,
      events.map(({ key }) => key),
    ]);
    const inserted = new Set(returned.map(({ key }) => key));
    const insertedEvents = unique.filter((item) => inserted.has(this.spec.key(item.row as R))).flatMap((item) => item.events);
    if (insertedEvents.length > 0) await this.committed(insertedEvents);
    const first = new Set<PendingInsert>(unique);
    return items.map((item, i) => (first.has(item) && inserted.has(keys[i] as string) ? 'inserted' : 'duplicate'));
  }

  private readonly statements = new Map<number, string>();

  private statement(rowParameterCount: number): string {
    let sql = this.statements.get(rowParameterCount);
    if (!sql) {
      const at = (i: number) => rowParameterCount + i + 1;
      const columns = OUTBOX_COLUMNS.map(([column]) => column);
      sql = `WITH inserted AS (${this.spec.sql}),
  logged AS (
    INSERT INTO audit_outbox (${columns.join(', ')})
    SELECT ${columns.map((column) => `e.${column}`).join(', ')}
    FROM unnest(${OUTBOX_COLUMNS.map(([, , type], i) => `$${at(i)}::${type}[]`).join(', ')}, $${at(OUTBOX_COLUMNS.length)}::text[])
      AS e(${columns.join(', ')}, row_key)
    WHERE e.row_key IN (SELECT key FROM inserted)
  )
SELECT key FROM inserted`;
      this.statements.set(rowParameterCount, sql);
    }
    return sql;
  }
}
