import { RequestOrigin } from '../audit/audit-event';
import { PermissionDeniedError } from '../shared/domain-error';
import { Application } from './application';
import { ApplicationType, permissionAllowedFor } from './permissions';

/** The authenticated caller: the application that owns the presented key. */
export interface Principal {
  applicationId: string;
  tenantId: string;
  type: ApplicationType;
  permissions: ReadonlySet<string>;
  canCreateExpiringApplications: boolean;
  /** The request this principal made, for the audit logs it causes (absent outside HTTP). */
  origin?: RequestOrigin;
}

export function principalOf(app: Application): Principal {
  return {
    applicationId: app.id,
    tenantId: app.tenantId,
    type: app.type,
    permissions: new Set(app.permissions),
    canCreateExpiringApplications: app.type === 'private' && app.canCreateExpiringApplications === true,
  };
}

/** A private application with can_create_expiring_applications may create expiring applications, and nothing else. */
export function mayCreateApplications(principal: Principal): boolean {
  return principal.permissions.has('application:create') || principal.canCreateExpiringApplications;
}

export function requirePermission(principal: Principal, permission: string): void {
  if (!principal.permissions.has(permission)) throw new PermissionDeniedError(permission);
}

/**
 * No escalation through provisioning: a caller cannot grant a permission its own type could hold but it does not.
 * (A management key with only application:create cannot mint a key holding log:read.)
 */
export function requireGrantable(principal: Principal, permissions: Iterable<string>): void {
  for (const permission of permissions) {
    if (permissionAllowedFor(permission, principal.type) && !principal.permissions.has(permission)) {
      throw new PermissionDeniedError(permission);
    }
  }
}
