import type { Principal } from '../applications/principal';
import { Actor } from './audit-event';

/** Who an audit event names for what an application's key (or the svc bridge, acting as one) did. */
export function actorOf(principal: Principal): Actor {
  return { id: principal.applicationId, type: 'application', ...(principal.origin ? { origin: principal.origin } : {}) };
}
