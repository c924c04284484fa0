import { RequestOrigin } from '../audit/audit-event';
import { EscalationError, PermissionDeniedError } from '../shared/domain-error';
import { AccessRule, Application } from './application';
import { ApplicationType } from './permissions';
import type { RateLimit } from '../rate-limits/rate-counter';

/** The authenticated caller: the application that owns the presented key. */
export interface Principal {
  applicationId: string;
  tenantId: string;
  type: ApplicationType;
  permissions: ReadonlySet<string>;
  /** Its access rules in priority order (the token vault evaluates them on every token it touches); absent: none. */
  rules?: readonly AccessRule[];
  canCreateExpiringApplications: boolean;
  /** The limit its requests count against: the application's own, else its tenant's default; absent: unlimited. */
  rateLimit?: RateLimit | null;
  /** Its tenant's default rate limit (what an application without a limit of its own is held to); absent: none. */
  tenantRateLimit?: RateLimit | null;
  /** The request this principal made, for the audit logs it causes (absent outside HTTP). */
  origin?: RequestOrigin;
  /**
   * True when it authenticated with the key a regenerate replaced, during that regenerate's overlap: a key on its way
   * out, which may finish its work but never leave authority behind (see requireCurrentKeyFor).
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
    rules: [...(app.rules ?? [])].sort((a, b) => a.priority - b.priority),
    canCreateExpiringApplications: app.type === 'private' && app.canCreateExpiringApplications === true,
    rateLimit: app.rateLimit ?? app.tenantRateLimit ?? null,
    tenantRateLimit: app.tenantRateLimit ?? null,
  };
}

/**
 * The permissions whose use leaves authority behind: a key (an application's, a proxy's), a grant to an application,
 * or a proxy, whose code, destination, configuration, binding and openness decide what its key does for whoever holds
 * it and what its transforms do through `svc`. Everything else a key may do ends with it or is data: reads, invocations,
 * deletes, tokens. (Regenerate is an `application:update` route.)
 */
export const LASTING_PERMISSIONS: ReadonlySet<string> = new Set([
  'application:create',
  'application:update',
  'proxy:create',
  'proxy:update',
  'tenant:update',
  // A log stream keeps sending the tenant's audit trail wherever it points, long after the key is gone.
  'log:stream',
]);

/**
 * A key replaced in a rotation keeps working through its overlap so that a fleet can finish its work, and for nothing
 * more: it may not use a permission that leaves authority behind (LASTING_PERMISSIONS), which would outlive it. It
 * could otherwise keep a back door once the overlap ends: regenerate its own application's key (taking the rotation
 * back), create an application or a proxy (a key of its own), grant another application more, or rewrite an existing
 * proxy (open it, recode it, bind it to an application its code then acts as). One rule, checked with every
 * permission (requirePermission), so every route and use case that names such a permission is covered.
 */
export function requireCurrentKeyFor(principal: Principal, permission: string): void {
  if (principal.viaPreviousKey === true && LASTING_PERMISSIONS.has(permission)) {
    throw new EscalationError(
      `The previous key of a regenerated application may not use ${permission}: what it would create or change would outlive the key; use the application's current key`,
    );
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
  requireCurrentKeyFor(principal, permission);
  const held = permission === 'application:create' ? mayCreateApplications(principal) : principal.permissions.has(permission);
  if (!held) throw new PermissionDeniedError(permission);
}
