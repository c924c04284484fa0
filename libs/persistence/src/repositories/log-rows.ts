import { AuditEvent, ChainHead, GENESIS_HASH, Log } from '@gatehouse/domain';

/** The logs table's columns of a log's public fields, in LogJson's order (and the outbox's: the same columns). */
export const LOG_COLUMNS = 'id, tenant_id, actor_id, actor_type, entity_type, entity_id, operation, message, created_at, request_id, source_ip, user_agent';
// What a StoredLogRow reads. (Aliased `position`: an output column named `seq` of type text would be what ORDER BY seq
// sorts.)
export const STORED_LOG_COLUMNS = `${LOG_COLUMNS.split(', ')
  .map((c) => `l.${c} AS ${c}`)
  .join(', ')}, l.seq::text AS position, encode(l.hash, 'hex') AS hash`;
export const GENESIS = `'\\x${GENESIS_HASH}'::bytea`;

/** A row of the logs (or of the outbox: the same columns) as the driver reads it: the one read shape of a log. */
export interface LogRow {
  id: string;
  tenant_id: string;
  actor_id: string | null;
  actor_type: Log['actorType'];
  entity_type: string;
  entity_id: string;
  operation: Log['operation'];
  message: string;
  created_at: Date;
  request_id: string | null;
  source_ip: string | null;
  user_agent: string | null;
}

export type StoredLogRow = LogRow & { position: string; hash: string };

export function fromLogRow(r: LogRow): AuditEvent {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    actorId: r.actor_id,
    actorType: r.actor_type,
    entityType: r.entity_type,
    entityId: r.entity_id,
    operation: r.operation,
    message: r.message,
    createdAt: r.created_at,
    ...(r.request_id === null ? {} : { requestId: r.request_id }),
    ...(r.source_ip === null ? {} : { sourceIp: r.source_ip }),
    ...(r.user_agent === null ? {} : { userAgent: r.user_agent }),
  };
}

export function fromStoredLogRow(r: StoredLogRow): Log {
  return { ...fromLogRow(r), position: Number(r.position), hash: r.hash };
}

export interface HeadRow {
  tenant_id: string;
  seq: string;
  hash: string;
}

export function fromHeadRow(r: HeadRow): ChainHead {
  return { tenantId: r.tenant_id, position: Number(r.seq), hash: r.hash };
}
