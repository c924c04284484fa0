import { ConflictError, DomainError, InvalidDataError, UnavailableError } from '@gatehouse/domain';

// The one place that reads PostgreSQL's (and the driver's) error codes: everything above persistence sees coded
// domain errors. A new kind of driver failure with a meaning for callers (e.g. another outage) is added here.

// SQLSTATE 23505, unique_violation: a second row with a key that must be unique (a duplicate key hash).
const UNIQUE_VIOLATION = '23505';
// SQLSTATE class 22, data exception: a NUL in text, an unencodable character, a value out of range.
const DATA_EXCEPTION = /^22[0-9A-Z]{3}$/;
// Connection-level failures of PostgreSQL (and the pool) mean the dependency is down, not a bug.
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '53300']);

/** The driver's failure as a coded domain error where it means something to the caller; anything else unchanged. */
export function translateDatabaseError(error: unknown): unknown {
  if (error instanceof DomainError) return error;
  // TypeORM's QueryFailedError copies the driver error's `code`; pg's connection errors carry Node's.
  const code = (error as { code?: unknown } | null | undefined)?.code;
  if (typeof code !== 'string') return error;
  if (code === UNIQUE_VIOLATION) return new ConflictError('The resource conflicts with an existing one');
  // Only the code goes on: PostgreSQL's message may quote the refused value.
  if (DATA_EXCEPTION.test(code)) return new InvalidDataError(code);
  if (UNAVAILABLE_CODES.has(code)) return new UnavailableError(code);
  return error;
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
