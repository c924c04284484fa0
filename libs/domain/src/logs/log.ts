import { ActorType, AuditOperation } from '../audit/audit-event';

/** One audit record (spec 2.2); append-only once written. `id` is the id of the audit event it records. */
export interface Log {
  id: string;
  tenantId: string;
  actorId: string | null;
  /** Null only for logs written by other services that name no actor. */
  actorType: ActorType | null;
  entityType: string;
  entityId: string;
  operation: AuditOperation;
  message: string;
  createdAt: Date;
}

export interface EntityType {
  displayName: string;
  value: string;
}

/** The catalogue of CONTRACT.md section 8: every log's `entity_type` is one of these. */
export const ENTITY_TYPES: readonly EntityType[] = [
  { displayName: 'Application', value: 'application' },
  { displayName: 'Bank', value: 'bank' },
  { displayName: 'Card', value: 'card' },
  { displayName: 'Proxy', value: 'proxy' },
  { displayName: 'Reactor', value: 'reactor' },
  { displayName: 'Tenant', value: 'tenant' },
  { displayName: 'Token', value: 'token' },
];

export const ENTITY_TYPE_VALUES: readonly string[] = ENTITY_TYPES.map((t) => t.value);
export const LOG_OPERATIONS: readonly AuditOperation[] = ['create', 'update', 'delete', 'read'];
export const ACTOR_TYPES: readonly ActorType[] = ['application', 'user', 'system'];
export const MAX_ENTITY_ID_LENGTH = 200;
export const MAX_LOG_MESSAGE_LENGTH = 10_000;

export function isEntityType(value: string): boolean {
  return ENTITY_TYPE_VALUES.includes(value);
}
