export type ActorType = 'application' | 'user' | 'system';
export type AuditOperation = 'create' | 'update' | 'delete' | 'read';

/**
 * One audit record (spec 2.2) as stored: append-only once written, in its tenant's hash chain. `id` is the id of the
 * audit event it records.
 */
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
  /** The log's place in its tenant's hash chain (1, 2, ...) and its chain hash (hex). */
  position: number;
  hash: string;
}

/**
 * A log before it has its place in the chain: what a use case records (given an id and a time by the unit of work),
 * the outbox holds, the queue carries and the chain writer appends. The one shape of an audit record on its way.
 */
export type AuditEvent = Omit<Log, 'position' | 'hash'>;

/**
 * A log's public fields as JSON (spec 2.2's names and order): the queue's payload, each item of `GET /logs` and each
 * line of an export are this (the latter two with the chain's `position` and `hash`), and so is each row the chain
 * writer inserts (with its `seq` and `hash` columns). `actor_id`, `actor_type` and
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

/**
 * The one serializer of a log's public fields (see LogJson); `createdAt` as `toISOString()` gives it, for a caller that
 * has it already (the chain writer). An absent field is left undefined, which JSON leaves out. The writer serializes
 * every ingested log with it (the rows it inserts are this plus the chain's columns): one object literal, no spreads.
 */
export function toLogJson(log: AuditEvent, createdAt = log.createdAt.toISOString()): LogJson {
  return {
    id: log.id,
    tenant_id: log.tenantId,
    actor_id: log.actorId ?? undefined,
    actor_type: log.actorType ?? undefined,
    entity_type: log.entityType,
    entity_id: log.entityId,
    operation: log.operation,
    message: log.message,
    created_at: createdAt,
    request_id: log.requestId,
    source_ip: log.sourceIp,
    user_agent: log.userAgent,
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
