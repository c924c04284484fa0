import { inMemoryPorts } from '../testing/in-memory-ports';
import { PermissionDeniedError, ValidationError } from '../shared/domain-error';
import { CreateTenant } from '../tenants/tenant-commands';
import { hashApiKey } from './api-key';
import { AccessRule } from './application';
import { CreateApplication, CreateApplicationInput } from './application-commands';
import { AuthenticateApiKey } from './authenticate-api-key';
import { APPLICATION_TYPES, ApplicationType, PERMISSIONS } from './permissions';
import { Principal, principalOf } from './principal';

const HOUR = 3_600_000;

const containerRule = (over: Partial<AccessRule> = {}): AccessRule => ({
  priority: 1,
  container: '/pci/high/',
  transform: 'reveal',
  permissions: ['token:read'],
  ...over,
});
const conditionRule = (over: Partial<AccessRule> = {}): AccessRule => ({
  priority: 1,
  conditions: [{ attribute: 'id', operator: 'equals', value: 'tok_1' }],
  transform: 'mask',
  permissions: ['token:read'],
  ...over,
});

/** A valid create body for each type; the cases below break one thing at a time. */
const VALID: Record<ApplicationType, CreateApplicationInput> = {
  private: { name: 'backend', type: 'private', permissions: ['token:read', 'token:search'] },
  public: { name: 'browser', type: 'public', permissions: ['token:create'] },
  management: { name: 'admin', type: 'management', permissions: ['application:read'] },
  expiring: { name: 'reveal', type: 'expiring', permissions: ['token:read'] },
};

async function setup() {
  const ports = inMemoryPorts();
  const { application } = await new CreateTenant(ports.uow, ports.clock).execute('acme');
  ports.uow.events.length = 0;
  ports.publisher.published.length = 0;
  const create = new CreateApplication(ports.uow, ports.clock, ports.expiry);
  return { ...ports, create, admin: principalOf(application) };
}

async function validationErrors(promise: Promise<unknown>): Promise<Record<string, string[]>> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).fieldErrors!;
}

describe('CreateApplication', () => {
  describe('succeeds', () => {
    it.each(APPLICATION_TYPES)('for a valid %s application, storing only the hash of its new key', async (type) => {
      const s = await setup();
      const { application, key } = await s.create.execute(s.admin, VALID[type]);
      expect(key).toMatch(/^key_[0-9A-Za-z]{32,}$/);
      expect(application.keyHash).toBe(hashApiKey(key));
      const stored = await s.applications.findById(s.admin.tenantId, application.id);
      expect(stored).toEqual(application);
      expect(JSON.stringify(stored)).not.toContain(key);
      expect(application).toMatchObject({
        tenantId: s.admin.tenantId,
        name: VALID[type].name,
        type,
        createdBy: s.admin.applicationId,
        createdAt: s.clock.now(),
        modifiedBy: null,
        modifiedAt: null,
      });
      const authenticated = await new AuthenticateApiKey(s.applications, s.clock).execute(key);
      expect(authenticated.application.id).toBe(application.id);
    });

    it('records exactly one create event, by the caller, that never carries the key', async () => {
      const s = await setup();
      const { application, key } = await s.create.execute(s.admin, VALID.private);
      expect(s.uow.events).toEqual([
        expect.objectContaining({
          tenantId: s.admin.tenantId,
          actorId: s.admin.applicationId,
          actorType: 'application',
          entityType: 'application',
          entityId: application.id,
          operation: 'create',
          createdAt: s.clock.now(),
        }),
      ]);
      expect(s.uow.events[0]!.message).toContain('backend');
      expect(s.uow.events[0]!.message).not.toContain(key);
      expect(s.publisher.published).toEqual(s.uow.events);
    });

    it('counts name length in UTF-16 code units: 100 emoji are 200 and fit, 101 do not', async () => {
      const s = await setup();
      await expect(s.create.execute(s.admin, { ...VALID.private, name: '🔑'.repeat(100) })).resolves.toBeDefined();
      expect(await validationErrors(s.create.execute(s.admin, { ...VALID.private, name: '🔑'.repeat(101) }))).toHaveProperty('name');
    });

    it('accepts a name of exactly 200 characters', async () => {
      const s = await setup();
      await expect(s.create.execute(s.admin, { ...VALID.private, name: 'n'.repeat(200) })).resolves.toBeDefined();
    });

    it('removes duplicate permissions', async () => {
      const s = await setup();
      const { application } = await s.create.execute(s.admin, { ...VALID.private, permissions: ['token:read', 'token:read'] });
      expect(application.permissions).toEqual(['token:read']);
    });

    it('accepts rules alone, without permissions', async () => {
      const s = await setup();
      const { application } = await s.create.execute(s.admin, { name: 'r', type: 'private', rules: [containerRule()] });
      expect(application.permissions).toEqual([]);
      expect(application.rules).toEqual([containerRule()]);
    });

    it.each(['/', '/pci/', '/pci/high/', '/a.b_c-d/9/'])('accepts the container %s', async (container) => {
      const s = await setup();
      await expect(
        s.create.execute(s.admin, { name: 'r', type: 'public', rules: [containerRule({ container, permissions: ['token:create'] })] }),
      ).resolves.toBeDefined();
    });

    it('accepts conditions on an expiring application, each attribute and operator', async () => {
      const s = await setup();
      const rule = conditionRule({
        conditions: [
          { attribute: 'id', operator: 'equals', value: 'a' },
          { attribute: 'container', operator: 'starts_with', value: '/pci/' },
        ],
      });
      const { application } = await s.create.execute(s.admin, { name: 'e', type: 'expiring', rules: [rule] });
      expect(application.rules).toEqual([rule]);
    });

    it('defaults expires_at of an expiring application to now + 1 minute and schedules its deletion', async () => {
      const s = await setup();
      const { application } = await s.create.execute(s.admin, VALID.expiring);
      expect(application.expiresAt).toEqual(new Date(s.clock.now().getTime() + 60_000));
      expect(s.expiry.scheduled).toEqual([{ id: application.id, tenantId: application.tenantId, expiresAt: application.expiresAt }]);
    });

    it('accepts expires_at exactly 24 hours ahead', async () => {
      const s = await setup();
      const expiresAt = new Date(s.clock.now().getTime() + 24 * HOUR);
      const { application } = await s.create.execute(s.admin, { ...VALID.expiring, expiresAt });
      expect(application.expiresAt).toEqual(expiresAt);
    });

    it('schedules nothing for applications that do not expire', async () => {
      const s = await setup();
      const { application } = await s.create.execute(s.admin, VALID.private);
      expect(application.expiresAt).toBeNull();
      expect(s.expiry.scheduled).toEqual([]);
    });

    it('lets a private application hold can_create_expiring_applications', async () => {
      const s = await setup();
      const { application } = await s.create.execute(s.admin, { ...VALID.private, canCreateExpiringApplications: true });
      expect(application.canCreateExpiringApplications).toBe(true);
    });
  });

  describe('refuses, writing and recording nothing,', () => {
    const cases: [string, CreateApplicationInput, string][] = [
      ['an empty name', { ...VALID.private, name: '' }, 'name'],
      ['a whitespace name', { ...VALID.private, name: ' \t ' }, 'name'],
      ['a 201-character name', { ...VALID.private, name: 'n'.repeat(201) }, 'name'],
      ['an unknown permission', { ...VALID.private, permissions: ['token:read', 'token:fly'] }, 'permissions[1]'],
      ['more than 50 permissions', { ...VALID.private, permissions: Array.from({ length: 51 }, (_, i) => `p:${i}`) }, 'permissions'],
      ['neither permissions nor rules', { name: 'x', type: 'private' }, 'permissions'],
      ['empty permissions and rules', { name: 'x', type: 'private', permissions: [], rules: [] }, 'permissions'],
      ['expires_at on a private application', { ...VALID.private, expiresAt: new Date('2026-11-21T10:30:00Z') }, 'expires_at'],
      ['expires_at on a management application', { ...VALID.management, expiresAt: new Date('2026-11-21T10:30:00Z') }, 'expires_at'],
      ['expires_at now', { ...VALID.expiring, expiresAt: new Date('2026-11-21T10:00:00.000Z') }, 'expires_at'],
      ['expires_at in the past', { ...VALID.expiring, expiresAt: new Date('2026-11-21T09:00:00.000Z') }, 'expires_at'],
      ['expires_at a millisecond over 24 hours', { ...VALID.expiring, expiresAt: new Date('2026-11-22T10:00:00.001Z') }, 'expires_at'],
      ['can_create_expiring_applications on public', { ...VALID.public, canCreateExpiringApplications: true }, 'can_create_expiring_applications'],
      ['can_create_expiring_applications on management', { ...VALID.management, canCreateExpiringApplications: true }, 'can_create_expiring_applications'],
      ['can_create_expiring_applications on expiring', { ...VALID.expiring, canCreateExpiringApplications: false }, 'can_create_expiring_applications'],
      ['rules on a management application', { ...VALID.management, rules: [containerRule({ permissions: ['application:read'] })] }, 'rules'],
      ['a rule priority of 0', { name: 'r', type: 'private', rules: [containerRule({ priority: 0 })] }, 'rules[0].priority'],
      ['a negative rule priority', { name: 'r', type: 'private', rules: [containerRule({ priority: -3 })] }, 'rules[0].priority'],
      ['a fractional rule priority', { name: 'r', type: 'private', rules: [containerRule({ priority: 1.5 })] }, 'rules[0].priority'],
      ['a duplicate rule priority', { name: 'r', type: 'private', rules: [containerRule(), containerRule({ container: '/other/' })] }, 'rules[1].priority'],
      ['an unknown rule transform', { name: 'r', type: 'private', rules: [containerRule({ transform: 'encrypt' as never })] }, 'rules[0].transform'],
      ['a rule without permissions', { name: 'r', type: 'private', rules: [containerRule({ permissions: [] })] }, 'rules[0].permissions'],
      [
        'a rule permission not allowed for the type',
        { name: 'r', type: 'public', rules: [containerRule({ permissions: ['token:read'] })] },
        'rules[0].permissions[0]',
      ],
      ['an unknown rule permission', { name: 'r', type: 'private', rules: [containerRule({ permissions: ['nope'] })] }, 'rules[0].permissions[0]'],
      ['a private rule without a container', { name: 'r', type: 'private', rules: [containerRule({ container: undefined })] }, 'rules[0].container'],
      [
        'a public rule without a container',
        { name: 'r', type: 'public', rules: [containerRule({ container: null, permissions: ['token:create'] })] },
        'rules[0].container',
      ],
      ['a container without slashes', { name: 'r', type: 'private', rules: [containerRule({ container: 'pci' })] }, 'rules[0].container'],
      ['a container without the closing slash', { name: 'r', type: 'private', rules: [containerRule({ container: '/pci' })] }, 'rules[0].container'],
      ['a container with an empty segment', { name: 'r', type: 'private', rules: [containerRule({ container: '/pci//high/' })] }, 'rules[0].container'],
      ['conditions on a private rule', { name: 'r', type: 'private', rules: [conditionRule({ container: undefined })] }, 'rules[0].conditions'],
      ['an expiring rule without conditions', { name: 'r', type: 'expiring', rules: [conditionRule({ conditions: undefined })] }, 'rules[0].conditions'],
      ['an expiring rule with empty conditions', { name: 'r', type: 'expiring', rules: [conditionRule({ conditions: [] })] }, 'rules[0].conditions'],
      ['a container on an expiring rule', { name: 'r', type: 'expiring', rules: [containerRule({ conditions: undefined })] }, 'rules[0].container'],
      ['container and conditions together', { name: 'r', type: 'private', rules: [conditionRule({ container: '/pci/' })] }, 'rules[0]'],
      [
        'an unknown condition attribute',
        { name: 'r', type: 'expiring', rules: [conditionRule({ conditions: [{ attribute: 'name' as never, operator: 'equals', value: 'x' }] })] },
        'rules[0].conditions[0].attribute',
      ],
      [
        'an unknown condition operator',
        { name: 'r', type: 'expiring', rules: [conditionRule({ conditions: [{ attribute: 'id', operator: 'contains' as never, value: 'x' }] })] },
        'rules[0].conditions[0].operator',
      ],
      [
        'an empty condition value',
        { name: 'r', type: 'expiring', rules: [conditionRule({ conditions: [{ attribute: 'id', operator: 'equals', value: '' }] })] },
        'rules[0].conditions[0].value',
      ],
      ['a NUL in the name', { ...VALID.private, name: 'a\u0000b' }, 'name'],
      ['an unpaired high surrogate in the name', { ...VALID.private, name: 'a\ud800b' }, 'name'],
      ['an unpaired low surrogate in the name', { ...VALID.private, name: '\udc00' }, 'name'],
      ['a NUL in a rule description', { name: 'r', type: 'private', rules: [containerRule({ description: 'a\u0000' })] }, 'rules[0].description'],
      [
        'a NUL in a condition value',
        { name: 'r', type: 'expiring', rules: [conditionRule({ conditions: [{ attribute: 'id', operator: 'equals', value: '\u0000' }] })] },
        'rules[0].conditions[0].value',
      ],
    ];

    it.each(cases)('%s', async (_, input, field) => {
      const s = await setup();
      const before = s.applications.all();
      const errors = await validationErrors(s.create.execute(s.admin, input));
      expect(Object.keys(errors)).toContain(field);
      expect(errors[field]!.every((m) => typeof m === 'string' && m.length > 0)).toBe(true);
      expect(s.applications.all()).toEqual(before);
      expect(s.uow.events).toEqual([]);
      expect(s.expiry.scheduled).toEqual([]);
    });

    it('a permission outside its type, for every type and every permission of the catalogue', async () => {
      const s = await setup();
      for (const type of APPLICATION_TYPES) {
        for (const permission of PERMISSIONS) {
          const input = { ...VALID[type], permissions: [permission.type] };
          if (permission.applicationTypes.includes(type)) {
            await expect(s.create.execute(s.admin, input)).resolves.toBeDefined();
          } else {
            expect(await validationErrors(s.create.execute(s.admin, input))).toEqual({ 'permissions[0]': [expect.stringContaining(permission.type)] });
          }
        }
      }
    });

    it('reports every problem at once', async () => {
      const s = await setup();
      const errors = await validationErrors(
        s.create.execute(s.admin, {
          name: '',
          type: 'public',
          permissions: ['log:read'],
          rules: [containerRule({ priority: 0, container: 'x', permissions: ['token:create'] })],
          canCreateExpiringApplications: true,
        }),
      );
      expect(Object.keys(errors).sort()).toEqual(
        ['can_create_expiring_applications', 'name', 'permissions[0]', 'rules[0].container', 'rules[0].priority'].sort(),
      );
    });
  });

  describe('permission', () => {
    it('is refused to an application without application:create', async () => {
      const s = await setup();
      const reader: Principal = { ...s.admin, permissions: new Set(['application:read']) };
      await expect(s.create.execute(reader, VALID.private)).rejects.toBeInstanceOf(PermissionDeniedError);
      expect(s.applications.all()).toHaveLength(1);
      expect(s.uow.events).toEqual([]);
    });

    it('lets a private application with can_create_expiring_applications create expiring applications, and nothing else', async () => {
      const s = await setup();
      const { application: minter } = await s.create.execute(s.admin, { ...VALID.private, canCreateExpiringApplications: true });
      const principal = principalOf(minter);
      expect(principal.permissions.has('application:create')).toBe(false);
      const { application } = await s.create.execute(principal, VALID.expiring);
      expect(application.createdBy).toBe(minter.id);
      for (const type of ['private', 'public', 'management'] as const) {
        await expect(s.create.execute(principal, VALID[type])).rejects.toBeInstanceOf(PermissionDeniedError);
      }
      expect(s.applications.all()).toHaveLength(3);
    });

    it('gives nothing to a private application whose can_create_expiring_applications is false', async () => {
      const s = await setup();
      const { application } = await s.create.execute(s.admin, { ...VALID.private, canCreateExpiringApplications: false });
      await expect(s.create.execute(principalOf(application), VALID.expiring)).rejects.toBeInstanceOf(PermissionDeniedError);
    });
  });
});
