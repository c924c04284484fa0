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

/**
 * `count` reads by the system of tokens tok_<from>, tok_<from + 1>, ... of `tenantId`, a second apart from `firstAt`
 * (a chain's worth of distinct, ordered events).
 */
export function tokenReads(tenantId: string, count: number, firstAt: Date, from = 0): AuditEvent[] {
  return Array.from({ length: count }, (_, i) =>
    aSystemEvent(tenantId, { entityId: `tok_${from + i}`, message: `Token tok_${from + i} read`, createdAt: new Date(firstAt.getTime() + i * 1000) }),
  );
}
