import { ConflictError, DomainError, InvalidDataError, NotFoundError, UnavailableError } from '@gatehouse/domain';
import { translateDatabaseError, translatingDatabaseErrors } from './database-errors';
import {
  CannotExecuteNotConnectedError,
  CannotGetEntityManagerNotConnectedError,
  QueryRunnerAlreadyReleasedError,
  QueryRunnerProviderAlreadyReleasedError,
} from 'typeorm';

function driverError(code: string): Error {
  return Object.assign(new Error(`driver says ${code}`), { code });
}

describe('translateDatabaseError', () => {
  it('turns a unique violation into a ConflictError', () => {
    expect(translateDatabaseError(driverError('23505'))).toBeInstanceOf(ConflictError);
  });

  it('turns a data exception into an InvalidDataError carrying the SQLSTATE only', () => {
    const error = translateDatabaseError(driverError('22021'));
    expect(error).toBeInstanceOf(InvalidDataError);
    expect(error).toMatchObject({ code: 'validation', reason: '22021', message: 'A value in the request cannot be stored' });
  });

  it.each(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '53300'])(
    'turns the connection failure %s into an UnavailableError',
    (code) => {
      const error = translateDatabaseError(driverError(code));
      expect(error).toBeInstanceOf(UnavailableError);
      expect(error).toMatchObject({ code: 'unavailable', reason: code });
    },
  );

  it.each([
    'ENOTFOUND',
    'EAI_AGAIN',
    'EHOSTUNREACH',
    'ENETUNREACH',
    'ECONNABORTED',
    '08006',
    '08001',
    '08P01',
    '53100',
    '53200',
    '57P04',
    '57P05',
    '57014',
    '58030',
    '40001',
    '40P01',
  ])('turns %s (an outage, or a failure the same request succeeds at later) into an UnavailableError', (code) => {
    expect(translateDatabaseError(driverError(code))).toMatchObject({ code: 'unavailable', reason: code });
  });

  it.each([
    'Connection terminated unexpectedly',
    'Connection terminated',
    'Connection terminated due to connection timeout',
    'timeout exceeded when trying to connect',
    'Client has encountered a connection error and is not queryable',
    'Client was closed and is not queryable',
    'Cannot use a pool after calling end on the pool',
    'Query read timeout',
  ])('turns the code-less driver failure "%s" into an UnavailableError, also inside a QueryFailedError', (message) => {
    expect(translateDatabaseError(new Error(message))).toBeInstanceOf(UnavailableError);
    const wrapped = Object.assign(new Error(message), { name: 'QueryFailedError', driverError: new Error(message) });
    expect(translateDatabaseError(wrapped)).toBeInstanceOf(UnavailableError);
  });

  it.each([
    ['QueryRunnerAlreadyReleasedError', new QueryRunnerAlreadyReleasedError()],
    ['QueryRunnerProviderAlreadyReleasedError', new QueryRunnerProviderAlreadyReleasedError()],
    ['CannotExecuteNotConnectedError', new CannotExecuteNotConnectedError()],
    ['CannotGetEntityManagerNotConnectedError', new CannotGetEntityManagerNotConnectedError('default')],
  ])("turns TypeORM's %s (a lost connection) into an UnavailableError", (name, error) => {
    expect(error.name).toBe(name);
    expect(translateDatabaseError(error)).toBeInstanceOf(UnavailableError);
  });

  it('leaves other failures and domain errors as they are', () => {
    const foreignKey = driverError('23503');
    const bug = new TypeError('x is undefined');
    const domain = new NotFoundError('Application');
    expect(translateDatabaseError(foreignKey)).toBe(foreignKey);
    expect(translateDatabaseError(bug)).toBe(bug);
    expect(translateDatabaseError(domain)).toBe(domain);
    expect(translateDatabaseError(undefined)).toBeUndefined();
    const mentionsConnection = new Error('the word Connection terminated in the middle does not count');
    expect(translateDatabaseError(mentionsConnection)).toBe(mentionsConnection);
    for (const code of ['23503', '42P01', '42703', '40002']) expect(translateDatabaseError(driverError(code))).not.toBeInstanceOf(UnavailableError);
  });
});

describe('translatingDatabaseErrors', () => {
  class Repository {
    readonly label = 'repo';
    async rejects(code: string): Promise<void> {
      throw driverError(code);
    }
    throws(code: string): void {
      throw driverError(code);
    }
    async answers(): Promise<string> {
      return this.label;
    }
  }

  it('translates what a method rejects or throws, and passes results and fields through', async () => {
    const repo = translatingDatabaseErrors(new Repository());
    await expect(repo.rejects('23505')).rejects.toBeInstanceOf(ConflictError);
    expect(() => repo.throws('57P01')).toThrow(UnavailableError);
    await expect(repo.answers()).resolves.toBe('repo');
    expect(repo.label).toBe('repo');
    expect(repo).toBeInstanceOf(Repository);
    await expect(repo.rejects('23503')).rejects.not.toBeInstanceOf(DomainError);
  });
});
