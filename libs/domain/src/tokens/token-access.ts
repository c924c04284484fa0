import { AccessRule, AccessRuleCondition, RuleTransform } from '../applications/application';
import { Principal } from '../applications/principal';
import { DomainError, PermissionDeniedError } from '../shared/domain-error';

export type TokenPermission = 'token:create' | 'token:read' | 'token:update' | 'token:delete' | 'token:use';

/** What a rule looks at: the token's id and containers. */
export interface TokenScope {
  id: string;
  containers: readonly string[];
}

/**
 * The rules that decide a principal's access to tokens, in the order they are tried: its access rules by priority,
 * then its plain `permissions` as one rule of lowest precedence on container `/` (CONTRACT.md section 12): `mask` for a
 * private (or expiring) application, `redact` for a public one.
 */
export function effectiveRules(principal: Principal): readonly AccessRule[] {
  const cached = effective.get(principal);
  if (cached) return cached;
  const tokenPermissions = [...principal.permissions].filter((p) => p.startsWith('token:'));
  const rules = [...(principal.rules ?? [])].sort((a, b) => a.priority - b.priority);
  if (tokenPermissions.length > 0) {
    rules.push({
      priority: Number.MAX_SAFE_INTEGER,
      container: '/',
      transform: principal.type === 'public' ? 'redact' : 'mask',
      permissions: tokenPermissions,
    });
  }
  if (Object.isFrozen(principal)) effective.set(principal, rules);
  return rules;
}

// Frozen principals (those of the key cache) are shared by every request with the key: their rules are ordered once.
const effective = new WeakMap<Principal, AccessRule[]>();

/** Whether any of the principal's rules (or its plain permissions) grants `permission` on some token. */
export function holdsTokenPermission(principal: Principal, permission: TokenPermission): boolean {
  return effectiveRules(principal).some((rule) => rule.permissions.includes(permission));
}

/** The endpoint's check: 403 unless some rule grants the permission at all. */
export function requireTokenPermission(principal: Principal, permission: TokenPermission): void {
  if (!holdsTokenPermission(principal, permission)) throw new PermissionDeniedError(permission);
}

/** Whether a rule applies to a token: its container is a prefix of one of the token's, or all its conditions hold. */
export function ruleMatches(rule: AccessRule, token: TokenScope): boolean {
  if (rule.container != null) return token.containers.some((container) => container.startsWith(rule.container!));
  if (rule.conditions != null && rule.conditions.length > 0) return rule.conditions.every((condition) => conditionHolds(condition, token));
  return false;
}

export function conditionHolds(condition: AccessRuleCondition, token: TokenScope): boolean {
  const values = condition.attribute === 'id' ? [token.id] : token.containers;
  switch (condition.operator) {
    case 'equals':
      return values.some((value) => value === condition.value);
    case 'starts_with':
      return values.some((value) => value.startsWith(condition.value));
    default:
      return false;
  }
}

/**
 * The transform of the first rule, in priority order, that applies to the token and grants `permission`; null when
 * none does (the caller gets a 403).
 */
export function decideAccess(principal: Principal, permission: TokenPermission, token: TokenScope): RuleTransform | null {
  for (const rule of effectiveRules(principal)) {
    if (rule.permissions.includes(permission) && ruleMatches(rule, token)) return rule.transform;
  }
  return null;
}

/** decideAccess, or a 403 that names the permission (never whether another rule would have matched). */
export function requireAccess(principal: Principal, permission: TokenPermission, token: TokenScope): RuleTransform {
  const transform = decideAccess(principal, permission, token);
  if (transform === null) throw new DomainError('forbidden', `No access rule of the application grants ${permission} on this token`);
  return transform;
}

/**
 * What a list may return, as the repository filters it: the union of the scopes of the rules that grant `permission`
 * (a container prefix, or a conjunction of conditions). Empty: nothing.
 */
export type TokenVisibility = ({ container: string } | { conditions: AccessRuleCondition[] })[];

export function visibilityOf(principal: Principal, permission: TokenPermission): TokenVisibility {
  const scopes: TokenVisibility = [];
  for (const rule of effectiveRules(principal)) {
    if (!rule.permissions.includes(permission)) continue;
    if (rule.container != null) scopes.push({ container: rule.container });
    else if (rule.conditions != null && rule.conditions.length > 0) scopes.push({ conditions: rule.conditions });
  }
  return scopes;
}
