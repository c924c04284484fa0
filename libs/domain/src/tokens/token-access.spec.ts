import { AccessRule } from '../applications/application';
import { Principal } from '../applications/principal';
import { ApplicationType } from '../applications/permissions';
import { decideAccess, holdsTokenPermission, requireAccess, ruleMatches, visibilityOf } from './token-access';

function principal(type: ApplicationType, permissions: string[], rules: AccessRule[] = []): Principal {
  return { applicationId: 'app', tenantId: 'tenant', type, permissions: new Set(permissions), rules, canCreateExpiringApplications: false };
}

const card = { id: 'tok_card_1', containers: ['/pci/high/'] };
const general = { id: 'general-2', containers: ['/general/high/', '/shared/'] };

describe('token access rules', () => {
  describe('each transform decides', () => {
    it.each(['reveal', 'mask', 'redact'] as const)('%s, from the rule that matches', (transform) => {
      const p = principal('private', [], [{ priority: 1, container: '/pci/', transform, permissions: ['token:read'] }]);
      expect(decideAccess(p, 'token:read', card)).toBe(transform);
    });
  });

  describe('container rules', () => {
    it('match when the rule container is a prefix of one of the token containers', () => {
      const rule: AccessRule = { priority: 1, container: '/shared/', transform: 'reveal', permissions: ['token:read'] };
      expect(ruleMatches(rule, general)).toBe(true);
      expect(ruleMatches(rule, card)).toBe(false);
      expect(ruleMatches({ ...rule, container: '/' }, card)).toBe(true);
      // Prefix of a container string, segment by segment as containers end with '/'.
      expect(ruleMatches({ ...rule, container: '/pci/high/x/' }, card)).toBe(false);
    });
  });

  describe('condition rules (expiring applications)', () => {
    const rule = (attribute: 'id' | 'container', operator: 'equals' | 'starts_with', value: string): AccessRule => ({
      priority: 1,
      conditions: [{ attribute, operator, value }],
      transform: 'reveal',
      permissions: ['token:read'],
    });
    it.each([
      ['id', 'equals', 'tok_card_1', true],
      ['id', 'equals', 'tok_card', false],
      ['id', 'starts_with', 'tok_', true],
      ['id', 'starts_with', 'general', false],
      ['container', 'equals', '/pci/high/', true],
      ['container', 'equals', '/pci/', false],
      ['container', 'starts_with', '/pci/', true],
      ['container', 'starts_with', '/general/', false],
    ] as const)('%s %s %s: %s', (attribute, operator, value, expected) => {
      expect(ruleMatches(rule(attribute, operator, value), card)).toBe(expected);
    });

    it('hold only when every condition holds', () => {
      const both: AccessRule = {
        priority: 1,
        conditions: [
          { attribute: 'id', operator: 'starts_with', value: 'tok_' },
          { attribute: 'container', operator: 'equals', value: '/general/high/' },
        ],
        transform: 'reveal',
        permissions: ['token:read'],
      };
      expect(ruleMatches(both, card)).toBe(false);
      expect(ruleMatches(both, { id: 'tok_x', containers: ['/general/high/'] })).toBe(true);
    });
  });

  describe('priority order', () => {
    it('the lowest priority number that matches and grants the permission wins, whatever the listing order', () => {
      const p = principal(
        'private',
        [],
        [
          { priority: 3, container: '/', transform: 'reveal', permissions: ['token:read'] },
          { priority: 1, container: '/pci/', transform: 'redact', permissions: ['token:read'] },
          { priority: 2, container: '/pci/high/', transform: 'mask', permissions: ['token:read'] },
        ],
      );
      expect(decideAccess(p, 'token:read', card)).toBe('redact');
      expect(decideAccess(p, 'token:read', general)).toBe('reveal');
    });

    it('a rule that does not grant the permission is passed over', () => {
      const p = principal(
        'private',
        [],
        [
          { priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:create'] },
          { priority: 2, container: '/pci/', transform: 'mask', permissions: ['token:read'] },
        ],
      );
      expect(decideAccess(p, 'token:read', card)).toBe('mask');
      expect(decideAccess(p, 'token:create', card)).toBe('reveal');
      expect(decideAccess(p, 'token:use', card)).toBeNull();
    });

    it('no matching rule: null, and requireAccess is a 403', () => {
      const p = principal('private', [], [{ priority: 1, container: '/bank/', transform: 'reveal', permissions: ['token:read'] }]);
      expect(decideAccess(p, 'token:read', card)).toBeNull();
      expect(() => requireAccess(p, 'token:read', card)).toThrow(expect.objectContaining({ code: 'forbidden' }));
    });
  });

  describe('plain permissions', () => {
    it('act as one rule on / of lowest precedence: mask for private, redact for public', () => {
      expect(decideAccess(principal('private', ['token:read']), 'token:read', card)).toBe('mask');
      expect(decideAccess(principal('public', ['token:create']), 'token:create', card)).toBe('redact');
      const withRule = principal('private', ['token:read'], [{ priority: 5, container: '/pci/', transform: 'reveal', permissions: ['token:read'] }]);
      expect(decideAccess(withRule, 'token:read', card)).toBe('reveal');
      expect(decideAccess(withRule, 'token:read', general)).toBe('mask');
    });

    it('a permission held by a rule alone is held', () => {
      const p = principal('private', [], [{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:use'] }]);
      expect(holdsTokenPermission(p, 'token:use')).toBe(true);
      expect(holdsTokenPermission(p, 'token:read')).toBe(false);
      expect(holdsTokenPermission(principal('management', ['proxy:read']), 'token:read')).toBe(false);
    });
  });

  it('visibility: the scopes of the rules that grant the permission', () => {
    const conditions = [{ attribute: 'id' as const, operator: 'equals' as const, value: 'x' }];
    const p = principal(
      'private',
      ['token:read'],
      [
        { priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:read'] },
        { priority: 2, container: '/bank/', transform: 'reveal', permissions: ['token:create'] },
      ],
    );
    expect(visibilityOf(p, 'token:read')).toEqual([{ container: '/pci/' }, { container: '/' }]);
    const expiring = principal('expiring', [], [{ priority: 1, conditions, transform: 'reveal', permissions: ['token:read'] }]);
    expect(visibilityOf(expiring, 'token:read')).toEqual([{ conditions }]);
  });
});
