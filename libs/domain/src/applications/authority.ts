import { EscalationError } from '../shared/domain-error';
import { describeRateLimit, RateLimit } from '../rate-limits/rate-counter';
import { ApplicationGrant } from './application';
import { permissionAllowedFor } from './permissions';
import { mayCreateApplications, Principal } from './principal';

/**
 * What an application can do here: its permissions, its rules' permissions, the expiring-application flag, and how
 * often (its own rate limit; null or absent: none of its own, so its tenant's default applies, if any).
 */
export type Powers = Pick<ApplicationGrant, 'permissions' | 'rules' | 'canCreateExpiringApplications'> & { rateLimit?: RateLimit | null };

/** Whether `inner` never allows more than `outer`: no larger burst and no faster sustained rate. Null: unlimited. */
export function rateLimitWithin(inner: RateLimit | null, outer: RateLimit | null): boolean {
  if (!outer) return true;
  if (!inner) return false;
  return inner.limit <= outer.limit && inner.limit * outer.windowSeconds <= outer.limit * inner.windowSeconds;
}

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

/**
 * A rate limit is a power too: an application limited itself may not make or act on one that may call more often (it
 * would use that key instead of its own), nor lift its own limit. Compared as they apply: an application without a
 * limit of its own is held to its tenant's default. Undefined when `powers` calls no more often than the caller may;
 * else what it may, in words.
 */
function rateBeyond(principal: Principal, powers: Powers): string | undefined {
  const limit = powers.rateLimit ?? principal.tenantRateLimit ?? null;
  if (rateLimitWithin(limit, principal.rateLimit ?? null)) return undefined;
  return `${limit ? `a rate limit of ${describeRateLimit(limit)}` : 'no rate limit'}, looser than this application's own (${describeRateLimit(principal.rateLimit)})`;
}

/** No escalation through provisioning: a create or an update grants only what the caller holds itself. */
export function requireGrantable(principal: Principal, grant: Powers): void {
  const missing = powersBeyond(principal, grant);
  const rate = rateBeyond(principal, grant);
  if (missing.length > 0 || rate) {
    throw new EscalationError(
      `This application may not grant what it does not hold itself: ${[...missing.map(describePower), ...(rate ? [rate] : [])].join(', ')}`,
    );
  }
}

export type ActionOnApplication = 'update' | 'regenerate the key of' | 'delete' | 'bind a proxy to' | 'lend svc to';

/**
 * No escalation between applications: a caller may act on another application (update, regenerate, delete, or lend
 * its identity to a proxy's transforms) only if everything that application can do (its rate limit included) is
 * within what the caller holds.
 * Otherwise a weaker key could take over a stronger one (a new key for it), disarm it (strip or delete it), or wield
 * it through `svc`. An application acting on itself holds exactly its own powers, so it may always (e.g. regenerate
 * its own key).
 */
export function requireAuthorityOver(principal: Principal, target: Powers & { id: string }, action: ActionOnApplication): void {
  if (target.id === principal.applicationId) return;
  const missing = powersBeyond(principal, target);
  const rate = rateBeyond(principal, target);
  if (missing.length > 0 || rate) {
    const holds = missing.length > 0 ? [`that application holds ${missing.map(describePower).join(', ')}, which this one does not`] : [];
    throw new EscalationError(
      `This application may not ${action} an application that can do more than it can: ${[...holds, ...(rate ? [`that application has ${rate}`] : [])].join('; ')}`,
    );
  }
}

function describePower(power: string): string {
  return power === CAN_CREATE_EXPIRING ? `${CAN_CREATE_EXPIRING} (which needs application:create)` : power;
}
