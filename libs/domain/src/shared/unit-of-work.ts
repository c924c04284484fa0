import { NewAuditEvent } from '../audit/audit-event';

/** An abstract class used as a port; the persistence adapter knows how to build each one inside a transaction. */
export type PortToken<T> = abstract new (...args: never[]) => T;

export interface TransactionScope {
  /** The repository behind `port`, bound to this transaction. */
  get<T>(port: PortToken<T>): T;
  /** An audit event written to the outbox in this same transaction, so it exists if and only if the change commits. */
  record(event: NewAuditEvent): void;
}

/** A repository port that can insert a new row (see UnitOfWork.insert). */
export interface Inserting<R> {
  insert(row: R): Promise<void>;
}

export abstract class UnitOfWork {
  abstract run<T>(work: (tx: TransactionScope) => Promise<T>): Promise<T>;

  /**
   * Audit events about something that changed nothing (a read), committed before this resolves: what
   * `run(tx => tx.record(...))` does, which an adapter may do in one statement.
   */
  record(events: NewAuditEvent[]): Promise<void> {
    return this.run(async (tx) => events.forEach((event) => tx.record(event)));
  }

  /**
   * A new row and the audit events of its creation, atomically: what `run(tx => { insert; record })` does, which an
   * adapter may do in one statement, grouped with the concurrent inserts of the same port (group commit). A row whose
   * key exists rejects with a ConflictError and writes nothing.
   */
  insert<R>(port: PortToken<Inserting<R>>, row: R, events: NewAuditEvent[]): Promise<void> {
    return this.run(async (tx) => {
      await tx.get(port).insert(row);
      events.forEach((event) => tx.record(event));
    });
  }
}
