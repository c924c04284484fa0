import { isIP } from 'node:net';
import {
  ACTOR_TYPES,
  ActorType,
  AuditOperation,
  ENTITY_TYPE_VALUES,
  FieldErrorCollector,
  isStorableText,
  AuditEvent,
  LOG_JSON_FIELDS,
  LOG_OPERATIONS,
  MAX_ENTITY_ID_LENGTH,
  MAX_LOG_MESSAGE_LENGTH,
  MAX_REQUEST_ID_LENGTH,
  MAX_SOURCE_IP_LENGTH,
  MAX_USER_AGENT_LENGTH,
  UUID_PATTERN,
} from '@gatehouse/domain';

/**
 * A log as another service (or the api's outbox publisher) puts it on the queue: the wire shape of
 * spec 2.2 plus an optional `id` for idempotency. docs/audit-trail.md documents it as a JSON schema. This is the
 * queue adapter's wire format (what it accepts: the api's publisher sends each event's `toLogJson`); the HTTP log
 * response is the api's, and the domain knows only `AuditEvent` and `Log`.
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
 * Validates one queued payload into an AuditEvent. Every problem is reported at once, as a ValidationError whose
 * field map names the fields (`prefix` places them inside a batch: `logs[3].tenant_id`).
 * The worker runs this for every log it ingests: the checks are plain functions over the payload, with nothing
 * allocated per field unless a field is wrong.
 */
export function parseLogEntry(raw: unknown, defaults: LogEntryDefaults, prefix = ''): AuditEvent {
  const problems = new Problems(prefix);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    problems.add('', 'must be a JSON object');
    problems.throwIfAny();
  }
  const entry = raw as Record<string, unknown>;
  for (const key in entry) if (!FIELDS.has(key)) problems.add(key, 'is not allowed');

  const id = uuid(entry, 'id', false, problems) ?? defaults.id;
  const tenantId = uuid(entry, 'tenant_id', true, problems);
  const actorId = uuid(entry, 'actor_id', false, problems);
  const actorType = oneOf<ActorType>(entry, 'actor_type', ACTOR_TYPES, false, problems);
  const entityType = oneOf(entry, 'entity_type', ENTITY_TYPE_VALUES, true, problems);
  const entityId = text(entry, 'entity_id', MAX_ENTITY_ID_LENGTH, true, problems);
  const operation = oneOf<AuditOperation>(entry, 'operation', LOG_OPERATIONS, true, problems);
  const message = text(entry, 'message', MAX_LOG_MESSAGE_LENGTH, false, problems);
  const createdAt = instant(entry.created_at, 'created_at', problems) ?? defaults.createdAt;
  const requestId = optionalText(entry, 'request_id', MAX_REQUEST_ID_LENGTH, problems);
  const sourceIp = optionalText(entry, 'source_ip', MAX_SOURCE_IP_LENGTH, problems);
  if (sourceIp !== undefined && isIP(sourceIp) === 0) problems.add('source_ip', 'must be an IPv4 or IPv6 address');
  const userAgent = optionalText(entry, 'user_agent', MAX_USER_AGENT_LENGTH, problems);
  problems.throwIfAny();
  const log: AuditEvent = {
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
  if (requestId !== undefined) log.requestId = requestId;
  if (sourceIp !== undefined) log.sourceIp = sourceIp;
  if (userAgent !== undefined) log.userAgent = userAgent;
  return log;
}

/** A payload's problems; the collector and the prefixed field names are made only once there is one. */
class Problems {
  private collector?: FieldErrorCollector;

  constructor(private readonly prefix: string) {}

  /** `field` empty: the payload itself. */
  add(field: string, message: string): void {
    const name = this.prefix && field ? `${this.prefix}.${field}` : this.prefix || field || 'payload';
    (this.collector ??= new FieldErrorCollector()).add(name, message);
  }

  throwIfAny(): void {
    this.collector?.throwIfAny();
  }
}

function uuid(entry: Record<string, unknown>, field: string, required: boolean, problems: Problems): string | null {
  const value = entry[field];
  if (value === undefined || value === null) {
    if (required) problems.add(field, 'is required');
    return null;
  }
  if (typeof value !== 'string' || !UUID_PATTERN.test(value)) {
    problems.add(field, 'must be a UUID');
    return null;
  }
  return value.toLowerCase();
}

function text(entry: Record<string, unknown>, field: string, max: number, nonEmpty: boolean, problems: Problems): string {
  const value = entry[field];
  if (typeof value !== 'string') {
    problems.add(field, value === undefined ? 'is required' : 'must be a string');
    return '';
  }
  if (nonEmpty && value.length === 0) problems.add(field, 'must not be empty');
  if (value.length > max) problems.add(field, `must be at most ${max} characters`);
  // As the API checks its bodies: PostgreSQL text cannot hold NUL, and an unpaired surrogate has no UTF-8 form (the
  // INSERT fails, and would be retried for nothing). Caught here, the job fails at once and alone, naming the field.
  if (!isStorableText(value)) problems.add(field, 'must not contain NUL characters or unpaired surrogates');
  return value;
}

function optionalText(entry: Record<string, unknown>, field: string, max: number, problems: Problems): string | undefined {
  return entry[field] === undefined || entry[field] === null ? undefined : text(entry, field, max, true, problems);
}

function oneOf<T extends string>(entry: Record<string, unknown>, field: string, allowed: readonly T[], required: boolean, problems: Problems): T | null {
  const value = entry[field];
  if (value === undefined || value === null) {
    if (required) problems.add(field, 'is required');
    return null;
  }
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    problems.add(field, `must be one of ${allowed.join(', ')}`);
    return null;
  }
  return value as T;
}

function instant(value: unknown, field: string, problems: Problems): Date | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !ISO_DATE_TIME.test(value)) {
    problems.add(field, 'must be an ISO 8601 date-time with an offset, e.g. 2026-11-21T10:00:00.000Z');
    return undefined;
  }
  const date = new Date(value);
  const year = date.getUTCFullYear();
  if (Number.isNaN(date.getTime()) || year < 1970 || year > 9999) {
    problems.add(field, 'must be a real date-time between 1970 and 9999');
    return undefined;
  }
  return date;
}
