import { PERMISSIONS } from '@gatehouse/domain';
import type { TestApp } from '@gatehouse/test-support/test-app';
import { appWithTenant, as, Caller, CONDITION_RULE, CONTAINER_RULE, createApplication, expectProblem, rowCounts, VALID } from '../support/application-fixtures';

const HOUR = 3_600_000;
const future = (ms: number) => new Date(Date.now() + ms).toISOString();

describe('application validation (every rule is a 400 naming the field, and writes nothing)', () => {
  let t: TestApp;
  let admin: Caller;
  beforeAll(async () => ({ t, admin } = await appWithTenant()), 60_000);
  afterAll(() => t.close());

  async function expectRefused(send: () => Promise<import('supertest').Response>, fields: string[]) {
    const before = await rowCounts(t, admin.tenantId);
    const res = await send();
    expectProblem(res, 400, fields);
    expect(res.body.title).toBe('One or more validation errors occurred.');
    expect(await rowCounts(t, admin.tenantId)).toEqual(before);
    return res;
  }

  describe('POST /applications', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['an empty name', { ...VALID.private, name: '' }, 'name'],
      ['a whitespace name', { ...VALID.private, name: '   ' }, 'name'],
      ['a 201-character name', { ...VALID.private, name: 'n'.repeat(201) }, 'name'],
      ['a missing name', { type: 'private', permissions: ['token:read'] }, 'name'],
      ['a numeric name', { ...VALID.private, name: 42 }, 'name'],
      ['an unknown type', { ...VALID.private, type: 'superuser' }, 'type'],
      ['a missing type', { name: 'x', permissions: ['token:read'] }, 'type'],
      ['a type in another case', { ...VALID.private, type: 'PRIVATE' }, 'type'],
      ['a non-string permission', { ...VALID.private, permissions: ['token:read', 7] }, 'permissions'],
      ['permissions that are not an array', { ...VALID.private, permissions: 'token:read' }, 'permissions'],
      ['an unknown permission', { ...VALID.private, permissions: ['token:read', 'token:fly'] }, 'permissions[1]'],
      ['a wildcard permission', { ...VALID.management, permissions: ['application:*'] }, 'permissions[0]'],
      ['51 permissions', { ...VALID.private, permissions: Array.from({ length: 51 }, () => 'token:read') }, 'permissions'],
      ['neither permissions nor rules', { name: 'x', type: 'private' }, 'permissions'],
      ['empty permissions and rules', { name: 'x', type: 'private', permissions: [], rules: [] }, 'permissions'],
      ['expires_at on a private application', { ...VALID.private, expires_at: future(HOUR) }, 'expires_at'],
      ['expires_at on a public application', { ...VALID.public, expires_at: future(HOUR) }, 'expires_at'],
      ['expires_at on a management application', { ...VALID.management, expires_at: future(HOUR) }, 'expires_at'],
      ['expires_at in the past', { ...VALID.expiring, expires_at: future(-60_000) }, 'expires_at'],
      ['expires_at more than 24 hours ahead', { ...VALID.expiring, expires_at: future(24 * HOUR + 60_000) }, 'expires_at'],
      ['expires_at that is not a date', { ...VALID.expiring, expires_at: 'tomorrow' }, 'expires_at'],
      ['expires_at that is an impossible date', { ...VALID.expiring, expires_at: '2026-13-45T00:00:00Z' }, 'expires_at'],
      ['expires_at as a number', { ...VALID.expiring, expires_at: Date.now() + HOUR }, 'expires_at'],
      ['can_create_expiring_applications on public', { ...VALID.public, can_create_expiring_applications: true }, 'can_create_expiring_applications'],
      ['can_create_expiring_applications on management', { ...VALID.management, can_create_expiring_applications: true }, 'can_create_expiring_applications'],
      ['can_create_expiring_applications on expiring', { ...VALID.expiring, can_create_expiring_applications: false }, 'can_create_expiring_applications'],
      ['can_create_expiring_applications as a string', { ...VALID.private, can_create_expiring_applications: 'yes' }, 'can_create_expiring_applications'],
      ['rules on a management application', { ...VALID.management, rules: [{ ...CONTAINER_RULE, permissions: ['application:read'] }] }, 'rules'],
      ['rules that are not an array', { ...VALID.private, rules: CONTAINER_RULE }, 'rules'],
      ['a rule priority of 0', { name: 'r', type: 'private', rules: [{ ...CONTAINER_RULE, priority: 0 }] }, 'rules[0].priority'],
      ['a negative rule priority', { name: 'r', type: 'private', rules: [{ ...CONTAINER_RULE, priority: -1 }] }, 'rules[0].priority'],
      ['a fractional rule priority', { name: 'r', type: 'private', rules: [{ ...CONTAINER_RULE, priority: 1.5 }] }, 'rules[0].priority'],
      ['a rule priority as a string', { name: 'r', type: 'private', rules: [{ ...CONTAINER_RULE, priority: '1' }] }, 'rules[0].priority'],
      ['a missing rule priority', { name: 'r', type: 'private', rules: [{ ...CONTAINER_RULE, priority: undefined }] }, 'rules[0].priority'],
      ['a duplicate rule priority', { name: 'r', type: 'private', rules: [CONTAINER_RULE, { ...CONTAINER_RULE, container: '/x/' }] }, 'rules[1].priority'],
      ['an unknown rule transform', { name: 'r', type: 'private', rules: [{ ...CONTAINER_RULE, transform: 'encrypt' }] }, 'rules[0].transform'],
      ['a missing rule transform', { name: 'r', type: 'private', rules: [{ ...CONTAINER_RULE, transform: undefined }] }, 'rules[0].transform'],
      ['empty rule permissions', { name: 'r', type: 'private', rules: [{ ...CONTAINER_RULE, permissions: [] }] }, 'rules[0].permissions'],
      ['missing rule permissions', { name: 'r', type: 'private', rules: [{ ...CONTAINER_RULE, permissions: undefined }] }, 'rules[0].permissions'],
      [
        'a rule permission not allowed for the type',
        { name: 'r', type: 'public', rules: [{ ...CONTAINER_RULE, permissions: ['token:read'] }] },
        'rules[0].permissions[0]',
      ],
      ['an unknown rule permission', { name: 'r', type: 'private', rules: [{ ...CONTAINER_RULE, permissions: ['nope'] }] }, 'rules[0].permissions[0]'],
      ['a private rule without a container', { name: 'r', type: 'private', rules: [{ ...CONTAINER_RULE, container: undefined }] }, 'rules[0].container'],
      [
        'a public rule without a container',
        { name: 'r', type: 'public', rules: [{ ...CONTAINER_RULE, container: undefined, permissions: ['token:create'] }] },
        'rules[0].container',
      ],
      ['a container without slashes', { name: 'r', type: 'private', rules: [{ ...CONTAINER_RULE, container: 'pci' }] }, 'rules[0].container'],
      ['a container without the leading slash', { name: 'r', type: 'private', rules: [{ ...CONTAINER_RULE, container: 'pci/high/' }] }, 'rules[0].container'],
      ['a container without the trailing slash', { name: 'r', type: 'private', rules: [{ ...CONTAINER_RULE, container: '/pci/high' }] }, 'rules[0].container'],
      ['a numeric container', { name: 'r', type: 'private', rules: [{ ...CONTAINER_RULE, container: 5 }] }, 'rules[0].container'],
      ['conditions on a private rule', { name: 'r', type: 'private', rules: [{ ...CONDITION_RULE }] }, 'rules[0].conditions'],
      ['an expiring rule without conditions', { name: 'r', type: 'expiring', rules: [{ ...CONDITION_RULE, conditions: undefined }] }, 'rules[0].conditions'],
      ['an expiring rule with empty conditions', { name: 'r', type: 'expiring', rules: [{ ...CONDITION_RULE, conditions: [] }] }, 'rules[0].conditions'],
      ['an expiring rule with a container', { name: 'r', type: 'expiring', rules: [{ ...CONTAINER_RULE }] }, 'rules[0].container'],
      ['container and conditions together', { name: 'r', type: 'expiring', rules: [{ ...CONDITION_RULE, container: '/pci/' }] }, 'rules[0]'],
      [
        'an unknown condition attribute',
        { name: 'r', type: 'expiring', rules: [{ ...CONDITION_RULE, conditions: [{ attribute: 'name', operator: 'equals', value: 'x' }] }] },
        'rules[0].conditions[0].attribute',
      ],
      [
        'an unknown condition operator',
        { name: 'r', type: 'expiring', rules: [{ ...CONDITION_RULE, conditions: [{ attribute: 'id', operator: 'contains', value: 'x' }] }] },
        'rules[0].conditions[0].operator',
      ],
      [
        'an empty condition value',
        { name: 'r', type: 'expiring', rules: [{ ...CONDITION_RULE, conditions: [{ attribute: 'id', operator: 'equals', value: '' }] }] },
        'rules[0].conditions[0].value',
      ],
      [
        'a missing condition value',
        { name: 'r', type: 'expiring', rules: [{ ...CONDITION_RULE, conditions: [{ attribute: 'id', operator: 'equals' }] }] },
        'rules[0].conditions[0].value',
      ],
      [
        'a second rule in error',
        { name: 'r', type: 'private', rules: [CONTAINER_RULE, { ...CONTAINER_RULE, priority: 2, transform: 'x' }] },
        'rules[1].transform',
      ],
    ];

    it.each(cases)('refuses %s', async (_, body, field) => {
      await expectRefused(() => as(t, admin.key).post('/applications', body), [field]);
    });

    it('accepts a name of exactly 200 characters', async () => {
      const res = await as(t, admin.key)
        .post('/applications', { ...VALID.private, name: 'n'.repeat(200) })
        .expect(201);
      expect(res.body.name).toHaveLength(200);
    });

    it('accepts 50 permissions (duplicates included) and the container /pci/high/', async () => {
      await as(t, admin.key)
        .post('/applications', { ...VALID.private, permissions: Array.from({ length: 50 }, () => 'token:read'), rules: [CONTAINER_RULE] })
        .expect(201);
    });

    it('accepts expires_at just under 24 hours ahead', async () => {
      await as(t, admin.key)
        .post('/applications', { ...VALID.expiring, expires_at: future(24 * HOUR - 60_000) })
        .expect(201);
    });

    it('refuses every permission outside its type and accepts every one inside, for each type', async () => {
      for (const type of ['private', 'public', 'management', 'expiring'] as const) {
        for (const permission of PERMISSIONS) {
          const body = { name: `${type} ${permission.type}`, type, permissions: [permission.type] };
          if ((permission.applicationTypes as readonly string[]).includes(type)) {
            await as(t, admin.key).post('/applications', body).expect(201);
          } else {
            await expectRefused(() => as(t, admin.key).post('/applications', body), ['permissions[0]']);
          }
        }
      }
    });

    it('reports every problem of a well-shaped body at once', async () => {
      const res = await expectRefused(
        () =>
          as(t, admin.key).post('/applications', {
            name: '  ',
            type: 'public',
            permissions: ['log:read'],
            rules: [{ ...CONTAINER_RULE, container: 'x', priority: 0, permissions: ['token:create'] }],
            can_create_expiring_applications: true,
          }),
        ['name', 'can_create_expiring_applications', 'permissions[0]', 'rules[0].container', 'rules[0].priority'],
      );
      expect(Object.keys(res.body.errors)).toHaveLength(5);
    });
  });

  describe('PUT /applications/{id}', () => {
    let target: { id: string };
    beforeAll(async () => {
      target = await createApplication(t, admin.key, { ...VALID.private, rules: [CONTAINER_RULE] });
    });

    const cases: [string, Record<string, unknown>, string][] = [
      ['a type', { name: 'x', permissions: ['token:read'], type: 'private' }, 'type'],
      ['expires_at', { name: 'x', permissions: ['token:read'], expires_at: future(HOUR) }, 'expires_at'],
      ['a key', { name: 'x', permissions: ['token:read'], key: 'key_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' }, 'key'],
      ['an id', { name: 'x', permissions: ['token:read'], id: '7d0f4a8e-1c2b-4d3e-9f60-123456789abc' }, 'id'],
      ['no name', { permissions: ['token:read'] }, 'name'],
      ['a 201-character name', { name: 'n'.repeat(201), permissions: ['token:read'] }, 'name'],
      ['omitting permissions and rules (cleared by the replace, then empty)', { name: 'x' }, 'permissions'],
      ['empty permissions and no rules', { name: 'x', permissions: [] }, 'permissions'],
      ['a permission the stored type may not hold', { name: 'x', permissions: ['application:read'] }, 'permissions[0]'],
      ['conditions on the private application', { name: 'x', rules: [CONDITION_RULE] }, 'rules[0].conditions'],
      ['a bad rule priority', { name: 'x', rules: [{ ...CONTAINER_RULE, priority: 0 }] }, 'rules[0].priority'],
    ];

    it.each(cases)('refuses %s, leaving the application as it was', async (_, body, field) => {
      const before = (await as(t, admin.key).get(`/applications/${target.id}`).expect(200)).body;
      await expectRefused(() => as(t, admin.key).put(`/applications/${target.id}`, body), [field]);
      expect((await as(t, admin.key).get(`/applications/${target.id}`).expect(200)).body).toEqual(before);
    });

    it('validates can_create_expiring_applications against the stored type', async () => {
      const pub = await createApplication(t, admin.key, VALID.public);
      await expectRefused(
        () => as(t, admin.key).put(`/applications/${pub.id}`, { name: 'x', permissions: ['token:create'], can_create_expiring_applications: true }),
        ['can_create_expiring_applications'],
      );
    });

    it('requires conditions on the rules of an expiring application', async () => {
      const exp = await createApplication(t, admin.key, VALID.expiring);
      await expectRefused(
        () => as(t, admin.key).put(`/applications/${exp.id}`, { name: 'x', rules: [CONTAINER_RULE] }),
        ['rules[0].container', 'rules[0].conditions'],
      );
    });
  });
});
