import { AuditEvent, MAX_ENTITY_ID_LENGTH, toLogJson, ValidationError } from '@gatehouse/domain';
import { parseLogEntry } from './log-entry-payload';

const TENANT = '6f1c1e0e-3b7a-4a43-9f55-0a4b7e1d2c10';
const ACTOR = '0b9f6a4e-6a53-4d43-9d0e-3f1a3c9b7e21';
const defaults = { id: '11111111-1111-8111-8111-111111111111', createdAt: new Date('2026-11-21T10:00:00.000Z') };

function valid(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { tenant_id: TENANT, entity_type: 'token', entity_id: 'tok_1', operation: 'read', message: 'Token read', ...extra };
}

function fieldErrorsOf(run: () => unknown): Record<string, string[]> {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).fieldErrors ?? {};
  }
  throw new Error('expected a ValidationError');
}

describe('parseLogEntry', () => {
  it('takes the minimal payload of another service, filling id and created_at from the job', () => {
    expect(parseLogEntry(valid(), defaults)).toEqual({
      id: defaults.id,
      tenantId: TENANT,
      actorId: null,
      actorType: null,
      entityType: 'token',
      entityId: 'tok_1',
      operation: 'read',
      message: 'Token read',
      createdAt: defaults.createdAt,
    });
  });

  it('keeps a given id (lower-cased), actor and created_at', () => {
    const log = parseLogEntry(
      valid({ id: 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', actor_id: ACTOR, actor_type: 'user', created_at: '2026-01-02T03:04:05.678+01:00' }),
      defaults,
    );
    expect(log.id).toBe('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
    expect(log.actorId).toBe(ACTOR);
    expect(log.actorType).toBe('user');
    expect(log.createdAt.toISOString()).toBe('2026-01-02T02:04:05.678Z');
  });

  it('reports every problem of a payload at once, by field', () => {
    const errors = fieldErrorsOf(() =>
      parseLogEntry(
        {
          tenant_id: 'acme',
          entity_type: 'spaceship',
          entity_id: '',
          operation: 'rename',
          message: 42,
          id: 'x',
          actor_type: 'robot',
          created_at: 'yesterday',
          extra: 1,
        },
        defaults,
      ),
    );
    expect(Object.keys(errors).sort()).toEqual(
      ['actor_type', 'created_at', 'entity_id', 'entity_type', 'extra', 'id', 'message', 'operation', 'tenant_id'].sort(),
    );
    expect(errors.tenant_id).toEqual(['must be a UUID']);
    expect(errors.extra).toEqual(['is not allowed']);
  });

  it('requires tenant_id, entity_type, entity_id, operation and message', () => {
    expect(Object.keys(fieldErrorsOf(() => parseLogEntry({}, defaults))).sort()).toEqual(
      ['entity_id', 'entity_type', 'message', 'operation', 'tenant_id'].sort(),
    );
  });

  it('refuses what PostgreSQL could not store, so one bad job cannot fail a batch', () => {
    const unstorable = ['must not contain NUL characters or unpaired surrogates'];
    expect(fieldErrorsOf(() => parseLogEntry(valid({ message: 'a\u0000b' }), defaults)).message).toEqual(unstorable);
    // An unpaired surrogate (high or low, in any text field) has no UTF-8 form: PostgreSQL refuses the row.
    for (const field of ['message', 'entity_id', 'request_id', 'user_agent']) {
      for (const lone of ['a\ud800b', 'a\udc00', '\udbff'])
        expect(fieldErrorsOf(() => parseLogEntry(valid({ [field]: lone }), defaults))[field]).toEqual(unstorable);
    }
    // A pair is a character like any other.
    expect(() => parseLogEntry(valid({ message: 'emoji \ud83d\ude00' }), defaults)).not.toThrow();
    expect(fieldErrorsOf(() => parseLogEntry(valid({ entity_id: 'x'.repeat(MAX_ENTITY_ID_LENGTH + 1) }), defaults)).entity_id).toEqual([
      `must be at most ${MAX_ENTITY_ID_LENGTH} characters`,
    ]);
  });

  it('refuses a created_at without an offset, or not a real instant', () => {
    expect(fieldErrorsOf(() => parseLogEntry(valid({ created_at: '2026-01-02T03:04:05' }), defaults)).created_at).toHaveLength(1);
    expect(fieldErrorsOf(() => parseLogEntry(valid({ created_at: '2026-13-40T03:04:05Z' }), defaults)).created_at).toHaveLength(1);
  });

  it('places field names inside a batch', () => {
    expect(Object.keys(fieldErrorsOf(() => parseLogEntry(valid({ tenant_id: 1 }), defaults, 'logs[3]')))).toEqual(['logs[3].tenant_id']);
  });

  it('takes the optional request fields, and refuses a source_ip that is not an address', () => {
    const log = parseLogEntry(valid({ request_id: 'req-1', source_ip: '2001:db8::7', user_agent: 'svc/1.0' }), defaults);
    expect(log).toMatchObject({ requestId: 'req-1', sourceIp: '2001:db8::7', userAgent: 'svc/1.0' });
    expect(parseLogEntry(toLogJson(log), { id: 'unused', createdAt: new Date(0) })).toEqual(log);
    expect(parseLogEntry(valid({ request_id: null }), defaults)).not.toHaveProperty('requestId');
    const errors = fieldErrorsOf(() => parseLogEntry(valid({ source_ip: 'localhost', user_agent: '', request_id: 'r'.repeat(129) }), defaults));
    expect(Object.keys(errors).sort()).toEqual(['request_id', 'source_ip', 'user_agent']);
  });

  it('refuses a payload that is not an object', () => {
    expect(fieldErrorsOf(() => parseLogEntry([1], defaults))).toEqual({ payload: ['must be a JSON object'] });
  });

  it('round-trips through the wire shape the api publishes', () => {
    const log: AuditEvent = parseLogEntry(valid({ actor_id: ACTOR, actor_type: 'application', created_at: '2026-11-21T10:00:00.123Z' }), defaults);
    expect(parseLogEntry(toLogJson(log), { id: 'unused', createdAt: new Date(0) })).toEqual(log);
  });
});
