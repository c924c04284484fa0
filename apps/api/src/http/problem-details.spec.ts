import { ConflictError, InvalidDataError, UnavailableError, ValidationError } from '@gatehouse/domain';
import { Logger } from '@nestjs/common';
import { ProblemDetailsFilter } from './problem-details';

describe('ProblemDetailsFilter.toProblem', () => {
  const filter = new ProblemDetailsFilter();
  // The filter logs the store's refusals and outages; keep the test output quiet.
  beforeAll(() => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });
  afterAll(() => jest.restoreAllMocks());

  it('maps each domain code to its status, with the message as detail', () => {
    expect(filter.toProblem(new ConflictError('The name is taken'))).toMatchObject({ status: 409, title: 'Conflict', detail: 'The name is taken' });
    expect(filter.toProblem(ValidationError.single('name', 'is required'))).toMatchObject({ status: 400, errors: { name: ['is required'] } });
  });

  it('answers a value the store refused as a 400 without the reason', () => {
    const body = filter.toProblem(new InvalidDataError('22021'));
    expect(body).toMatchObject({ status: 400, detail: 'A value in the request cannot be stored' });
    expect(JSON.stringify(body)).not.toContain('22021');
  });

  it('answers an unavailable dependency as a 503 that tells the client to retry, not what failed', () => {
    const body = filter.toProblem(new UnavailableError('ECONNREFUSED'));
    expect(body).toMatchObject({ status: 503, title: 'Service Unavailable', detail: 'A dependency is unavailable; retry later' });
    expect(JSON.stringify(body)).not.toContain('ECONNREFUSED');
  });

  it('answers anything else as a 500, reading no driver code', () => {
    const body = filter.toProblem(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    expect(body).toMatchObject({ status: 500 });
  });
});
