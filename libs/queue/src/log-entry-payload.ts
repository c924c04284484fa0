import { isIP } from 'node:net';
import {
  ACTOR_TYPES,
  ActorType,
  AuditOperation,
  ENTITY_TYPE_VALUES,
  FieldErrorCollector,
  Log,
  LOG_JSON_FIELDS,
  LOG_OPERATIONS,
  MAX_ENTITY_ID_LENGTH,
  MAX_LOG_MESSAGE_LENGTH,
  MAX_REQUEST_ID_LENGTH,
  MAX_SOURCE_IP_LENGTH,
  MAX_USER_AGENT_LENGTH,
  toLogJson,
  UUID_PATTERN,
} from '@gatehouse/domain';

/**
 * A log as another service (or the api's outbox publisher) puts it on the queue: the wire shape of
 * spec 2.2 plus an optional `id` for idempotency. The README documents it as a JSON schema. This is the
 * queue adapter's wire format; the HTTP log response is the api's, and the domain knows only `Log`.
 */
export interface LogEntryPayload {
  id?: string;
  tenant_id: string;
  actor_id?: string | null;
  actor_type?: string | null;
  entity_type: string;
  entity_id: string;
  operation: string;
  message: string;
  created_at?: string;
  /** Where the request behind the log came from, when known. */
  request_id?: string | null;
  source_ip?: string | null;
  user_agent?: string | null;
}

const FIELDS = new Set<string>(LOG_JSON_FIELDS);
// ISO 8601 date-time with an explicit offset: a zone-less time would be read in the worker's zone.
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

/** What a payload without `id` or `created_at` gets; derived from the job so that a retry yields the same log. */
export interface LogEntryDefaults {
  id: string;
  createdAt: Date;
}

/**
 * Validates one queued payload into a Log. Every problem is reported at once, as a ValidationError whose
 * field map names the fields (`prefix` places them inside a batch: `logs[3].tenant_id`).
 */
export function parseLogEntry(raw: unknown, defaults: LogEntryDefaults, prefix = ''): Log {
  const errors = new FieldErrorCollector();
  const at = (field: string) => (prefix ? `${prefix}.${field}` : field);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    errors.add(prefix || 'payload', 'must be a JSON object');
    errors.throwIfAny();
  }
  const entry = raw as Record<string, unknown>;
  for (const key of Object.keys(entry)) if (!FIELDS.has(key)) errors.add(at(key), 'is not allowed');

  const uuid = (field: string, required: boolean): string | null => {
    const value = entry[field];
    if (value === undefined || value === null) {
      if (required) errors.add(at(field), 'is required');
      return null;
    }
    if (typeof value !== 'string' || !UUID_PATTERN.test(value)) {
      errors.add(at(field), 'must be a UUID');
      return null;
    }
    return value.toLowerCase();
  };
  const text = (field: string, max: number, nonEmpty: boolean): string => {
    const value = entry[field];
    if (typeof value !== 'string') {
      errors.add(at(field), value === undefined ? 'is required' : 'must be a string');
      return '';
    }
    if (nonEmpty && value.length === 0) errors.add(at(field), 'must not be empty');
    if (value.length > max) errors.add(at(field), `must be at most ${max} characters`);
    // PostgreSQL text cannot hold NUL; caught here, it fails this one job instead of a whole batch.
    if (value.includes('\u0000')) errors.add(at(field), 'must not contain NUL characters');
    return value;
  };
  const oneOf = <T extends string>(field: string, allowed: readonly T[], required: boolean): T | null => {
    const value = entry[field];
    if (value === undefined || value === null) {
      if (required) errors.add(at(field), 'is required');
      return null;
    }
    if (typeof value !== 'string' || !allowed.includes(value as T)) {
      errors.add(at(field), `must be one of ${allowed.join(', ')}`);
      return null;
    }
    return value as T;
  };

  const id = uuid('id', false) ?? defaults.id;
  const tenantId = uuid('tenant_id', true);
  const actorId = uuid('actor_id', false);
  const actorType = oneOf<ActorType>('actor_type', ACTOR_TYPES, false);
  const entityType = oneOf('entity_type', ENTITY_TYPE_VALUES, true);
  const entityId = text('entity_id', MAX_ENTITY_ID_LENGTH, true);
  const operation = oneOf<AuditOperation>('operation', LOG_OPERATIONS, true);
  const message = text('message', MAX_LOG_MESSAGE_LENGTH, false);
  const createdAt = instant(entry.created_at, at('created_at'), errors) ?? defaults.createdAt;
  const optionalText = (field: string, max: number): string | undefined =>
    entry[field] === undefined || entry[field] === null ? undefined : text(field, max, true);
  const requestId = optionalText('request_id', MAX_REQUEST_ID_LENGTH);
  const sourceIp = optionalText('source_ip', MAX_SOURCE_IP_LENGTH);
  if (sourceIp !== undefined && isIP(sourceIp) === 0) errors.add(at('source_ip'), 'must be an IPv4 or IPv6 address');
  const userAgent = optionalText('user_agent', MAX_USER_AGENT_LENGTH);
  errors.throwIfAny();
  return {
    ...(requestId === undefined ? {} : { requestId }),
    ...(sourceIp === undefined ? {} : { sourceIp }),
    ...(userAgent === undefined ? {} : { userAgent }),
    id,
    tenantId: tenantId!,
    actorId,
    actorType,
    entityType: entityType!,
    entityId,
    operation: operation!,
    message,
    createdAt,
  };
}

function instant(value: unknown, field: string, errors: FieldErrorCollector): Date | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !ISO_DATE_TIME.test(value)) {
    errors.add(field, 'must be an ISO 8601 date-time with an offset, e.g. 2026-11-21T10:00:00.000Z');
    return undefined;
  }
  const date = new Date(value);
  const year = date.getUTCFullYear();
  if (Number.isNaN(date.getTime()) || year < 1970 || year > 9999) {
    errors.add(field, 'must be a real date-time between 1970 and 9999');
    return undefined;
  }
  return date;
}

/** Converts a Log back to the queue's wire shape (the api's publisher sends its outbox events this way). */
export function toLogEntryPayload(log: Log): LogEntryPayload {
  return toLogJson(log);
}
