import { ConflictError, DomainError, InvalidDataError, UnavailableError } from '@gatehouse/domain';

// The one place that reads PostgreSQL's (and the driver's) error codes: everything above persistence sees coded
// domain errors. A new kind of driver failure with a meaning for callers (e.g. another outage) is added here.

// SQLSTATE 23505, unique_violation: a second row with a key that must be unique (a duplicate key hash).
const UNIQUE_VIOLATION = '23505';
// SQLSTATE class 22, data exception: a NUL in text, an unencodable character, a value out of range.
const DATA_EXCEPTION = /^22[0-9A-Z]{3}$/;
// Failures that mean the database cannot serve now, not that the request or the code is wrong (a 503 with
// Retry-After, never a 500). Socket errors of the connection (Node's codes):
const UNAVAILABLE_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// SQLSTATEs: class 08 connection exception, 53 insufficient resources (disk full, out of memory, too many
// connections), 57P01-57P05 shutdown, crash, cannot connect now (starting up, shutting down, in recovery), database
// dropped, idle session timeout, 58 system error (I/O); 57014, a statement cancelled (by `statement_timeout`:
// the server is too slow to answer now); and 40001/40P01, a serialization failure or deadlock, which the same
// request retried later succeeds at.
const UNAVAILABLE_SQLSTATE = /^(08[0-9A-Z]{3}|53[0-9A-Z]{3}|57P0[1-5]|57014|58[0-9A-Z]{3}|40001|40P01)$/;
// node-postgres and pg-pool report a connection lost mid-query, a connection that could not be made in time, or a
// client already broken by such a failure, with no code at all: only their messages tell (TypeORM's QueryFailedError
// carries the driver's message too). PGlite behind its socket server fails the same way.
const UNAVAILABLE_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end|Query read timeout)/;
// TypeORM's own errors that follow from a lost connection: a transaction's query runner is released when its
// connection fails, so the transaction's next query finds it released (through the runner, or through the entity
// manager that the runner provided: the outbox insert of a unit of work in a fast shutdown); after the pool is closed
// (the service stopping) nothing can connect.
const UNAVAILABLE_TYPEORM_ERRORS = new Set([
  'QueryRunnerAlreadyReleasedError',
  'QueryRunnerProviderAlreadyReleasedError',
  'CannotExecuteNotConnectedError',
  'CannotGetEntityManagerNotConnectedError',
]);

/** The driver's failure as a coded domain error where it means something to the caller; anything else unchanged. */
export function translateDatabaseError(error: unknown): unknown {
  if (error instanceof DomainError) return error;
  // TypeORM's QueryFailedError copies the driver error's `code`; pg's connection errors carry Node's.
  const code = (error as { code?: unknown } | null | undefined)?.code;
  if (typeof code !== 'string') return connectionLost(error) ? new UnavailableError('the connection to PostgreSQL was lost or could not be made') : error;
  if (code === UNIQUE_VIOLATION) return new ConflictError('The resource conflicts with an existing one');
  // Only the code goes on: PostgreSQL's message may quote the refused value.
  if (DATA_EXCEPTION.test(code)) return new InvalidDataError(code);
  if (UNAVAILABLE_SOCKET_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code)) return new UnavailableError(code);
  return error;
}

/** A code-less failure of the driver, the pool or TypeORM that means the connection is gone. */
function connectionLost(error: unknown): boolean {
  const messages = [error, (error as { driverError?: unknown } | null | undefined)?.driverError].map(
    (e) => (e as { message?: unknown } | null | undefined)?.message,
  );
  if (UNAVAILABLE_TYPEORM_ERRORS.has((error as { name?: unknown } | null | undefined)?.name as string)) return true;
  return messages.some((message) => typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message));
}

/**
 * The repository with every failure of its methods translated, so that use cases, the guard and the worker see
 * coded domain errors. A Proxy rather than a try/catch in each method: a method added later is covered too.
 */
export function translatingDatabaseErrors<T extends object>(repository: T): T {
  return new Proxy(repository, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function' || property === 'constructor') return value;
      return (...args: unknown[]) => {
        try {
          const result: unknown = value.apply(target, args);
          return result instanceof Promise ? result.catch((error: unknown) => Promise.reject(translateDatabaseError(error))) : result;
        } catch (error) {
          throw translateDatabaseError(error);
        }
      };
    },
  });
}
