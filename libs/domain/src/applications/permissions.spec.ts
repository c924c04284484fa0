import { APPLICATION_TYPES, MANAGEMENT_PERMISSIONS, PERMISSIONS, isKnownPermission, permissionAllowedFor, permissionsFor } from './permissions';

// The catalogue of CONTRACT.md section 4, written out independently of the code.
const CONTRACT: Record<string, string[]> = {
  'token:create': ['public', 'private'],
  'token:update': ['public', 'private'],
  'token:read': ['private', 'expiring'],
  'token:search': ['private'],
  'token:delete': ['private'],
  'token:use': ['private'],
  'proxy:invoke': ['private', 'management'],
  'tenant:read': ['management'],
  'tenant:update': ['management'],
  'application:create': ['management'],
  'application:read': ['management'],
  'application:update': ['management'],
  'application:delete': ['management'],
  'proxy:create': ['management'],
  'proxy:read': ['management'],
  'proxy:update': ['management'],
  'proxy:delete': ['management'],
  'log:read': ['management'],
  'log:stream': ['management'],
};

describe('permission catalogue', () => {
  it('is exactly the contract table', () => {
    const catalogue = Object.fromEntries(PERMISSIONS.map((p) => [p.type, [...p.applicationTypes].sort()]));
    const expected = Object.fromEntries(Object.entries(CONTRACT).map(([k, v]) => [k, [...v].sort()]));
    expect(catalogue).toEqual(expected);
  });

  it('describes every permission', () => {
    for (const p of PERMISSIONS) expect(p.description.length).toBeGreaterThan(0);
  });

  it.each(APPLICATION_TYPES.flatMap((type) => Object.keys(CONTRACT).map((permission) => [type, permission] as const)))(
    'a %s application may hold %s only where the contract says so',
    (type, permission) => {
      expect(permissionAllowedFor(permission, type)).toBe(CONTRACT[permission]!.includes(type));
      expect(permissionsFor(type).some((p) => p.type === permission)).toBe(CONTRACT[permission]!.includes(type));
    },
  );

  it('knows nothing outside the catalogue', () => {
    expect(isKnownPermission('token:read')).toBe(true);
    expect(isKnownPermission('token:*')).toBe(false);
    expect(isKnownPermission('constructor')).toBe(false);
    expect(isKnownPermission('__proto__')).toBe(false);
    expect(permissionAllowedFor('toString', 'management')).toBe(false);
  });

  it('gives a first management application every management permission', () => {
    const management = Object.entries(CONTRACT)
      .filter(([, types]) => types.includes('management'))
      .map(([p]) => p);
    expect([...MANAGEMENT_PERMISSIONS].sort()).toEqual(management.sort());
  });
});
