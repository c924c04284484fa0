import { FieldErrorCollector } from '../shared/domain-error';
import { ApplicationType, isKnownPermission, permissionAllowedFor } from './permissions';
import type { RateLimit } from '../rate-limits/rate-counter';

export const RULE_TRANSFORMS = ['redact', 'mask', 'reveal'] as const;
export type RuleTransform = (typeof RULE_TRANSFORMS)[number];
export const CONDITION_ATTRIBUTES = ['id', 'container'] as const;
export const CONDITION_OPERATORS = ['starts_with', 'equals'] as const;

export interface AccessRuleCondition {
  attribute: (typeof CONDITION_ATTRIBUTES)[number];
  operator: (typeof CONDITION_OPERATORS)[number];
  value: string;
}

export interface AccessRule {
  description?: string | null;
  priority: number;
  container?: string | null;
  conditions?: AccessRuleCondition[] | null;
  transform: RuleTransform;
  permissions: string[];
}

export interface Application {
  id: string;
  tenantId: string;
  name: string;
  type: ApplicationType;
  permissions: string[];
  rules: AccessRule[];
  keyHash: string;
  createdBy: string | null;
  createdAt: Date;
  modifiedBy: string | null;
  modifiedAt: Date | null;
  expiresAt: Date | null;
  canCreateExpiringApplications: boolean | null;
  /** Requests this key may make; null: the tenant's default, if any. */
  rateLimit: RateLimit | null;
  /** The key replaced by a regenerate with an overlap, accepted until previousKeyExpiresAt; null: none. */
  previousKeyHash: string | null;
  previousKeyExpiresAt: Date | null;
  /** When the key last authenticated, to the minute (written in the background); null: never. */
  lastUsedAt: Date | null;
  /** Read-only, filled by the repository's reads when the tenant has a default rate limit (absent otherwise). */
  tenantRateLimit?: RateLimit;
}

/** An application past its expires_at: its key authenticates no more, and it lends nothing (svc bridge calls). */
export function applicationExpired(application: Pick<Application, 'expiresAt'>, now: Date): boolean {
  return application.expiresAt !== null && application.expiresAt.getTime() <= now.getTime();
}

/**
 * A new application's record from what defines it: everything else starts empty (no rules, never modified, no
 * expiry, no rate limit of its own, no previous key, never used) unless `fields` sets it.
 */
export function newApplicationRecord(
  fields: Pick<Application, 'id' | 'tenantId' | 'name' | 'type' | 'permissions' | 'keyHash' | 'createdAt'> & Partial<Application>,
): Application {
  return {
    rules: [],
    createdBy: null,
    modifiedBy: null,
    modifiedAt: null,
    expiresAt: null,
    canCreateExpiringApplications: null,
    rateLimit: null,
    previousKeyHash: null,
    previousKeyExpiresAt: null,
    lastUsedAt: null,
    ...fields,
  };
}

/** The fields a create or a full update (PUT) may set. */
export interface ApplicationGrant {
  permissions: string[];
  rules: AccessRule[];
  canCreateExpiringApplications: boolean | null;
}

export const MAX_PERMISSIONS = 50;
export const MAX_NAME_LENGTH = 200;
export const EXPIRY_DEFAULT_MS = 60_000;
export const EXPIRY_MAX_MS = 24 * 60 * 60 * 1000;
const CONTAINER_PATTERN = /^\/([A-Za-z0-9_.-]+\/)*$/;

// PostgreSQL text cannot hold NUL, and an unpaired surrogate has no UTF-8 form: refused rather than stored mangled.
const UNSTORABLE_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether text is stored and read back exactly as sent (no NUL, no unpaired surrogate). */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE_TEXT.test(value);
}

export function validateText(value: string, field: string, errors: FieldErrorCollector): void {
  if (!isStorableText(value)) errors.add(field, 'must not contain NUL characters or unpaired surrogates');
}

/** Lengths are JavaScript string lengths (UTF-16 code units): an emoji outside the BMP counts 2. */
export function validateName(name: string, errors: FieldErrorCollector): void {
  if (name.trim().length === 0) errors.add('name', 'must not be empty');
  if (name.length > MAX_NAME_LENGTH) errors.add('name', `must be at most ${MAX_NAME_LENGTH} characters`);
  validateText(name, 'name', errors);
}

/** The rules of spec 2.6, 2.7 and CONTRACT.md section 5 that depend on the application type. */
export function validateGrant(type: ApplicationType, grant: ApplicationGrant, errors: FieldErrorCollector): void {
  if (grant.permissions.length === 0 && grant.rules.length === 0) {
    errors.add('permissions', 'at least one of permissions or rules must be non-empty');
  }
  if (grant.permissions.length > MAX_PERMISSIONS) {
    errors.add('permissions', `must hold at most ${MAX_PERMISSIONS} permissions`);
  }
  grant.permissions.forEach((permission, i) => validatePermission(type, permission, `permissions[${i}]`, errors));

  if (grant.canCreateExpiringApplications != null && type !== 'private') {
    errors.add('can_create_expiring_applications', 'applies only to private applications');
  }

  if (type === 'management' && grant.rules.length > 0) {
    errors.add('rules', 'management applications take no access rules');
    return;
  }
  const priorities = new Set<number>();
  grant.rules.forEach((rule, i) => {
    const at = `rules[${i}]`;
    if (!Number.isInteger(rule.priority) || rule.priority < 1) errors.add(`${at}.priority`, 'must be an integer of at least 1');
    else if (priorities.has(rule.priority)) errors.add(`${at}.priority`, 'must be unique within the application');
    priorities.add(rule.priority);
    if (!RULE_TRANSFORMS.includes(rule.transform)) errors.add(`${at}.transform`, `must be one of ${RULE_TRANSFORMS.join(', ')}`);
    if (typeof rule.description === 'string') validateText(rule.description, `${at}.description`, errors);
    if (rule.permissions.length === 0) errors.add(`${at}.permissions`, 'must not be empty');
    rule.permissions.forEach((p, j) => validatePermission(type, p, `${at}.permissions[${j}]`, errors));
    validateRuleScope(type, rule, at, errors);
  });
}

function validatePermission(type: ApplicationType, permission: string, field: string, errors: FieldErrorCollector): void {
  if (!isKnownPermission(permission)) errors.add(field, `unknown permission '${truncate(permission)}'`);
  else if (!permissionAllowedFor(permission, type)) errors.add(field, `'${permission}' is not allowed for ${type} applications`);
}

function validateRuleScope(type: ApplicationType, rule: AccessRule, at: string, errors: FieldErrorCollector): void {
  const hasContainer = rule.container != null;
  const hasConditions = rule.conditions != null;
  if (hasContainer && hasConditions) {
    errors.add(at, 'container and conditions are mutually exclusive');
    return;
  }
  if (type === 'expiring') {
    if (hasContainer) errors.add(`${at}.container`, 'is not allowed for expiring applications; use conditions');
    if (!rule.conditions || rule.conditions.length === 0) errors.add(`${at}.conditions`, 'is required for expiring applications');
  } else {
    if (hasConditions) errors.add(`${at}.conditions`, 'applies only to expiring applications');
    if (!hasContainer) errors.add(`${at}.container`, `is required for ${type} applications`);
  }
  if (hasContainer && !CONTAINER_PATTERN.test(rule.container!)) {
    errors.add(`${at}.container`, "must start and end with '/', e.g. /pci/high/");
  }
  rule.conditions?.forEach((c, k) => {
    const cat = `${at}.conditions[${k}]`;
    if (!CONDITION_ATTRIBUTES.includes(c.attribute)) errors.add(`${cat}.attribute`, `must be one of ${CONDITION_ATTRIBUTES.join(', ')}`);
    if (!CONDITION_OPERATORS.includes(c.operator)) errors.add(`${cat}.operator`, `must be one of ${CONDITION_OPERATORS.join(', ')}`);
    if (typeof c.value !== 'string' || c.value.length === 0) errors.add(`${cat}.value`, 'must not be empty');
    else validateText(c.value, `${cat}.value`, errors);
  });
}

/** `expires_at` of CONTRACT.md section 5: expiring only, default now + 1 minute, after now, within 24 hours. */
export function resolveExpiry(type: ApplicationType, requested: Date | undefined, now: Date, errors: FieldErrorCollector): Date | null {
  if (type !== 'expiring') {
    if (requested !== undefined) errors.add('expires_at', 'applies only to expiring applications');
    return null;
  }
  if (requested === undefined) return new Date(now.getTime() + EXPIRY_DEFAULT_MS);
  if (requested.getTime() <= now.getTime()) errors.add('expires_at', 'must be in the future');
  else if (requested.getTime() - now.getTime() > EXPIRY_MAX_MS) errors.add('expires_at', 'must be at most 24 hours ahead');
  return requested;
}

export function dedupe(values: string[]): string[] {
  return [...new Set(values)];
}

function truncate(value: string): string {
  return value.length > 60 ? `${value.slice(0, 60)}...` : value;
}
