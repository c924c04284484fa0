import { Application, newApplicationRecord } from '@gatehouse/domain';
import { applicationJson, toApplicationResponse } from './applications.dto';

function application(name: string): Application {
  return newApplicationRecord({
    id: '8d0c1c1e-6a57-4c4b-9d1e-3f1c2b3a4d5e',
    tenantId: '1f0c1c1e-6a57-4c4b-9d1e-3f1c2b3a4d5e',
    name,
    type: 'private',
    permissions: ['token:read'],
    keyHash: 'hash',
    createdAt: new Date('2030-01-01T00:00:00Z'),
    rateLimit: { limit: 10, windowSeconds: 60 },
  });
}

describe('applicationJson', () => {
  it('serialises a frozen application (a cache entry) once, as its response object', () => {
    const cached = Object.freeze(application('cached'));
    const json = applicationJson(cached);
    expect(applicationJson(cached)).toBe(json);
    expect(json.value).toBe(toApplicationResponse(cached));
    expect(json.text).toBe(JSON.stringify(toApplicationResponse(cached)));
    // Another entry (the application reloaded after a change) has a serialisation of its own.
    const reloaded = Object.freeze(application('reloaded'));
    expect(applicationJson(reloaded)).not.toBe(json);
    expect(JSON.parse(applicationJson(reloaded).text)).toMatchObject({ name: 'reloaded', rate_limit: { limit: 10, window_seconds: 60 } });
  });

  it('serialises an application that is not frozen (not a cache entry) afresh every time', () => {
    const loaded = application('loaded');
    const json = applicationJson(loaded);
    expect(json.text).toBe(JSON.stringify(toApplicationResponse(loaded)));
    loaded.name = 'renamed';
    expect(JSON.parse(applicationJson(loaded).text).name).toBe('renamed');
  });
});
