import { EntityManager } from 'typeorm';
import { AuditEvent } from '@gatehouse/domain';

/** The outbox's columns, their SQL array types and the event's fields, for one INSERT of any number of rows. */
export const OUTBOX_COLUMNS: ReadonlyArray<readonly [column: string, field: keyof AuditEvent, type: string]> = [
  ['id', 'id', 'uuid'],
  ['tenant_id', 'tenantId', 'uuid'],
  ['actor_id', 'actorId', 'uuid'],
  ['actor_type', 'actorType', 'varchar'],
  ['entity_type', 'entityType', 'varchar'],
  ['entity_id', 'entityId', 'varchar'],
  ['operation', 'operation', 'varchar'],
  ['message', 'message', 'text'],
  ['created_at', 'createdAt', 'timestamptz'],
  ['request_id', 'requestId', 'varchar'],
  ['source_ip', 'sourceIp', 'varchar'],
  ['user_agent', 'userAgent', 'varchar'],
];

/** The events' outbox rows, by one statement with one parameter per column (the same text whatever the number of rows). */
export async function insertOutboxRows(em: EntityManager, events: AuditEvent[]): Promise<void> {
  await em.query(
    INSERT_OUTBOX_ROWS,
    OUTBOX_COLUMNS.map(([, field]) => events.map((event) => event[field] ?? null)),
  );
}

const INSERT_OUTBOX_ROWS = `INSERT INTO audit_outbox (${OUTBOX_COLUMNS.map(([column]) => column).join(', ')})
  SELECT * FROM unnest(${OUTBOX_COLUMNS.map(([, , type], i) => `$${i + 1}::${type}[]`).join(', ')})`;
