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

/**
 * A log's public fields as JSON (spec 2.2's names and order): the queue's payload, each item of `GET /logs` and each
 * line of an export are this (the latter two with the chain's `position` and `hash`). `actor_id`, `actor_type` and
 * the request fields are absent when unknown.
 */
export interface LogJson {
  id: string;
  tenant_id: string;
  actor_id?: string;
  actor_type?: ActorType;
  entity_type: string;
  entity_id: string;
  operation: AuditOperation;
  message: string;
  created_at: string;
  request_id?: string;
  source_ip?: string;
  user_agent?: string;
}

/** The names of LogJson's fields, in their order. */
export const LOG_JSON_FIELDS: readonly (keyof LogJson)[] = [
  'id',
  'tenant_id',
  'actor_id',
  'actor_type',
  'entity_type',
  'entity_id',
  'operation',
  'message',
  'created_at',
  'request_id',
  'source_ip',
  'user_agent',
];

/** The one serializer of a Log's public fields (see LogJson). */
export function toLogJson(log: Log): LogJson {
  return {
    id: log.id,
    tenant_id: log.tenantId,
    ...(log.actorId === null ? {} : { actor_id: log.actorId }),
    ...(log.actorType === null ? {} : { actor_type: log.actorType }),
    entity_type: log.entityType,
    entity_id: log.entityId,
    operation: log.operation,
    message: log.message,
    created_at: log.createdAt.toISOString(),
    ...(log.requestId === undefined ? {} : { request_id: log.requestId }),
    ...(log.sourceIp === undefined ? {} : { source_ip: log.sourceIp }),
    ...(log.userAgent === undefined ? {} : { user_agent: log.userAgent }),
  };
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
export const MAX_ENTITY_ID_LENGTH = 400;
export const MAX_LOG_MESSAGE_LENGTH = 10_000;
export const MAX_REQUEST_ID_LENGTH = 128;
export const MAX_SOURCE_IP_LENGTH = 64;
export const MAX_USER_AGENT_LENGTH = 512;

export function isEntityType(value: string): boolean {
  return ENTITY_TYPE_VALUES.includes(value);
}
