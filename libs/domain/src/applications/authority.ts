import { EscalationError } from '../shared/domain-error';
import { ApplicationGrant } from './application';
import { permissionAllowedFor } from './permissions';
import { mayCreateApplications, Principal } from './principal';

/** What an application can do here: its permissions, its rules' permissions, and the expiring-application flag. */
export type Powers = Pick<ApplicationGrant, 'permissions' | 'rules' | 'canCreateExpiringApplications'>;

export const CAN_CREATE_EXPIRING = 'can_create_expiring_applications';

/**
 * The powers of `powers` that `principal` does not hold itself, in order. A permission counts only where the caller's
 * own type could hold it: a management key provisions the token permissions of private applications without ever
 * holding them (CONTRACT.md section 4), but it cannot hand out or touch a management permission it lacks. Creating
 * expiring applications is part of what `application:create` allows, so only a caller who may create applications
 * covers `can_create_expiring_applications`.
 */
export function powersBeyond(principal: Principal, powers: Powers): string[] {
  const missing = new Set<string>();
  for (const permission of [...powers.permissions, ...powers.rules.flatMap((rule) => rule.permissions)]) {
    if (permissionAllowedFor(permission, principal.type) && !principal.permissions.has(permission)) missing.add(permission);
  }
  if (powers.canCreateExpiringApplications === true && !mayCreateApplications(principal)) missing.add(CAN_CREATE_EXPIRING);
  return [...missing];
}

/** No escalation through provisioning: a create or an update grants only what the caller holds itself. */
export function requireGrantable(principal: Principal, grant: Powers): void {
  const missing = powersBeyond(principal, grant);
  if (missing.length > 0) {
    throw new EscalationError(`This application may not grant what it does not hold itself: ${describe(missing)}`);
  }
}

export type ActionOnApplication = 'update' | 'regenerate the key of' | 'delete' | 'bind a proxy to';

/**
 * No escalation between applications: a caller may act on another application (update, regenerate, delete, or lend
 * its identity to a proxy's transforms) only if everything that application can do is within what the caller holds.
 * Otherwise a weaker key could take over a stronger one (a new key for it), disarm it (strip or delete it), or wield
 * it through `svc`. An application acting on itself holds exactly its own powers, so it may always (e.g. regenerate
 * its own key).
 */
export function requireAuthorityOver(principal: Principal, target: Powers & { id: string }, action: ActionOnApplication): void {
  if (target.id === principal.applicationId) return;
  const missing = powersBeyond(principal, target);
  if (missing.length > 0) {
    throw new EscalationError(
      `This application may not ${action} an application that can do more than it can: that application holds ${describe(missing)}, which this one does not`,
    );
  }
}

function describe(missing: string[]): string {
  return missing.map((power) => (power === CAN_CREATE_EXPIRING ? `${CAN_CREATE_EXPIRING} (which needs application:create)` : power)).join(', ');
}
