import { RequestOrigin } from '../audit/audit-event';
import { EscalationError, PermissionDeniedError } from '../shared/domain-error';
import { Application } from './application';
import { ApplicationType } from './permissions';
import type { RateLimit } from '../rate-limits/rate-counter';

/** The authenticated caller: the application that owns the presented key. */
export interface Principal {
  applicationId: string;
  tenantId: string;
  type: ApplicationType;
  permissions: ReadonlySet<string>;
  canCreateExpiringApplications: boolean;
  /** The limit its requests count against: the application's own, else its tenant's default; absent: unlimited. */
  rateLimit?: RateLimit | null;
  /** Its tenant's default rate limit (what an application without a limit of its own is held to); absent: none. */
  tenantRateLimit?: RateLimit | null;
  /** The request this principal made, for the audit logs it causes (absent outside HTTP). */
  origin?: RequestOrigin;
  /**
   * True when it authenticated with the key a regenerate replaced, during that regenerate's overlap: a key on its way
   * out, which may finish its work but never mint a key (see requireCurrentKey).
   */
  viaPreviousKey?: boolean;
}

/** The principals of frozen applications (a cache's entries, shared by every request that hits them), made once. */
const principals = new WeakMap<Application, Principal>();

/**
 * The principal of an application. An application that cannot change (frozen, as the key cache keeps them) gets the
 * same frozen principal every time, so a cached key costs no Set of permissions per request.
 */
export function principalOf(app: Application): Principal {
  if (!Object.isFrozen(app)) return newPrincipal(app);
  let principal = principals.get(app);
  if (!principal) {
    principal = Object.freeze(newPrincipal(app));
    principals.set(app, principal);
  }
  return principal;
}

function newPrincipal(app: Application): Principal {
  return {
    applicationId: app.id,
    tenantId: app.tenantId,
    type: app.type,
    permissions: new Set(app.permissions),
    canCreateExpiringApplications: app.type === 'private' && app.canCreateExpiringApplications === true,
    rateLimit: app.rateLimit ?? app.tenantRateLimit ?? null,
    tenantRateLimit: app.tenantRateLimit ?? null,
  };
}

/**
 * A key replaced in a rotation keeps working through its overlap so that a fleet can roll the new key out, and for
 * nothing more: it may not mint a key that outlives it. Regenerating its own application's key would hand it the
 * current key and retire (or, with an overlap, demote) the new one, taking the rotation back; regenerating another
 * application's key or creating an application would leave it a permanent key when the overlap ends.
 */
export function requireCurrentKey(principal: Principal, action: string): void {
  if (principal.viaPreviousKey === true) {
    throw new EscalationError(`The previous key of a regenerated application may not ${action}: use the application's current key`);
  }
}

/** A private application with can_create_expiring_applications may create expiring applications, and nothing else. */
export function mayCreateApplications(principal: Principal): boolean {
  return principal.permissions.has('application:create') || principal.canCreateExpiringApplications;
}

/**
 * The permission rule of every route and use case. `application:create` is also open to a private application with
 * can_create_expiring_applications: CreateApplication then limits it to expiring applications.
 */
export function requirePermission(principal: Principal, permission: string): void {
  const held = permission === 'application:create' ? mayCreateApplications(principal) : principal.permissions.has(permission);
  if (!held) throw new PermissionDeniedError(permission);
}
