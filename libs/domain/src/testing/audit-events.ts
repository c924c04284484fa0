import { randomUUID } from 'node:crypto';
import { AuditEvent } from '../logs/log';

/** An audit event of `tenantId` by the system: a read of token tok_1 unless `over` says otherwise. */
export function aSystemEvent(tenantId: string, over: Partial<AuditEvent> = {}): AuditEvent {
  return {
    id: randomUUID(),
    tenantId,
    actorId: null,
    actorType: 'system',
    entityType: 'token',
    entityId: 'tok_1',
    operation: 'read',
    message: 'read',
    createdAt: new Date(),
    ...over,
  } as AuditEvent;
}
