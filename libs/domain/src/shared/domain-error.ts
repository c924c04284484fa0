/** Every failure the domain reports carries a code; the HTTP layer maps each code to a status once. */
export type DomainErrorCode = 'validation' | 'not_found' | 'conflict' | 'unauthenticated' | 'forbidden' | 'payload_too_large' | 'rate_limited' | 'unavailable';

export type FieldErrors = Record<string, string[]>;

export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly fieldErrors?: FieldErrors,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends DomainError {
  constructor(fieldErrors: FieldErrors, message = 'One or more validation errors occurred.') {
    super('validation', message, fieldErrors);
  }

  static single(field: string, message: string): ValidationError {
    return new ValidationError({ [field]: [message] });
  }
}

export class NotFoundError extends DomainError {
  constructor(entity: string) {
    super('not_found', `${entity} not found`);
  }
}

export class ConflictError extends DomainError {
  constructor(message: string) {
    super('conflict', message);
  }
}

export class AuthenticationError extends DomainError {
  constructor(message = 'A valid SVC-API-KEY header is required') {
    super('unauthenticated', message);
  }
}

export class PermissionDeniedError extends DomainError {
  constructor(permission: string) {
    super('forbidden', `The application lacks the ${permission} permission`);
  }
}

/**
 * A dependency (the database, Redis) cannot answer now; the same request may succeed later. The message names
 * the failure for logs; the client is told only that a dependency is unavailable.
 */
export class UnavailableError extends DomainError {
  constructor(readonly reason: string) {
    super('unavailable', `A dependency is unavailable: ${reason}`);
  }
}

/**
 * A value that passed validation but the store cannot hold (a NUL in text, an unencodable character, a number
 * out of range): still the request's fault. `reason` (e.g. a SQLSTATE) is for logs, never for the client.
 */
export class InvalidDataError extends DomainError {
  constructor(readonly reason: string) {
    super('validation', 'A value in the request cannot be stored');
  }
}

/** A caller acting beyond its own powers (granting, or acting on a stronger application); the message says what. */
export class EscalationError extends DomainError {
  constructor(message: string) {
    super('forbidden', message);
  }
}

/** Refused for now (a rate limit, a throttle); the caller may retry after `retryAfterSeconds`. */
export class TooManyRequestsError extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('rate_limited', message);
  }
}

/** Collects field errors so a validation reports every problem at once, not the first. */
export class FieldErrorCollector {
  private readonly errors: FieldErrors = {};

  add(field: string, message: string): void {
    (this.errors[field] ??= []).push(message);
  }

  get isEmpty(): boolean {
    return Object.keys(this.errors).length === 0;
  }

  throwIfAny(): void {
    if (!this.isEmpty) throw new ValidationError(this.errors);
  }
}
