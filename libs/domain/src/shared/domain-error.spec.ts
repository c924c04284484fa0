import {
  AuthenticationError,
  ConflictError,
  DomainError,
  EscalationError,
  FieldErrorCollector,
  NotFoundError,
  PermissionDeniedError,
  ValidationError,
} from './domain-error';

describe('domain errors', () => {
  it.each([
    [new ValidationError({ name: ['must not be empty'] }), 'validation', 'ValidationError'],
    [new NotFoundError('Application'), 'not_found', 'NotFoundError'],
    [new ConflictError('taken'), 'conflict', 'ConflictError'],
    [new AuthenticationError(), 'unauthenticated', 'AuthenticationError'],
    [new PermissionDeniedError('proxy:read'), 'forbidden', 'PermissionDeniedError'],
    [new EscalationError('may not'), 'forbidden', 'EscalationError'],
  ])('%s carries the code %s and its class name', (error, code, name) => {
    expect(error).toBeInstanceOf(DomainError);
    expect(error.code).toBe(code);
    expect(error.name).toBe(name);
  });

  it('names the missing permission', () => {
    expect(new PermissionDeniedError('proxy:read').message).toContain('proxy:read');
  });

  it('builds a one-field validation error', () => {
    expect(ValidationError.single('rules[0].priority', 'bad').fieldErrors).toEqual({ 'rules[0].priority': ['bad'] });
  });
});

describe('FieldErrorCollector', () => {
  it('reports every problem at once, grouped by field', () => {
    const errors = new FieldErrorCollector();
    errors.add('name', 'a');
    errors.add('rules[0].priority', 'b');
    errors.add('name', 'c');
    expect(errors.isEmpty).toBe(false);
    let thrown: unknown;
    try {
      errors.throwIfAny();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ValidationError);
    expect((thrown as ValidationError).fieldErrors).toEqual({ name: ['a', 'c'], 'rules[0].priority': ['b'] });
  });

  it('does not throw when empty', () => {
    const errors = new FieldErrorCollector();
    expect(errors.isEmpty).toBe(true);
    expect(() => errors.throwIfAny()).not.toThrow();
  });
});
