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
  /** Where a request to this API came from; absent when unknown (system actors, other services that omit them). */
  requestId?: string;
  sourceIp?: string;
  userAgent?: string;
  /** Set once written: the log's place in its tenant's hash chain (1, 2, ...) and its chain hash (hex). */
  position?: number;
  hash?: string;
}

/** A log as stored: always in its tenant's chain. */
export type ChainedLog = Log & { position: number; hash: string };

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
export const MAX_REQUEST_ID_LENGTH = 128;
export const MAX_SOURCE_IP_LENGTH = 64;
export const MAX_USER_AGENT_LENGTH = 512;

export function isEntityType(value: string): boolean {
  return ENTITY_TYPE_VALUES.includes(value);
}
