import { ActorType, AuditEvent } from '../logs/log';

/** Where a request to this API came from: recorded with the logs it causes. */
export interface RequestOrigin {
  requestId?: string;
  /** The client's address, after the trusted proxies' X-Forwarded-For. */
  sourceIp?: string;
  userAgent?: string;
}

export interface Actor {
  id: string | null;
  type: ActorType;
  origin?: RequestOrigin;
}

export const SYSTEM_ACTOR: Actor = { id: null, type: 'system' };

/**
 * What a use case records: an AuditEvent without the id and time the unit of work gives it (the id becomes the log
 * id), and with the actor whole (its id, type and request origin become the event's fields).
 */
export type NewAuditEvent = Pick<AuditEvent, 'tenantId' | 'entityType' | 'entityId' | 'operation' | 'message'> & { actor: Actor };

/** The recorded event as the outbox stores it and the queue delivers it. */
export function toAuditEvent(event: NewAuditEvent, id: string, createdAt: Date): AuditEvent {
  return {
    id,
    tenantId: event.tenantId,
    actorId: event.actor.id,
    actorType: event.actor.type,
    entityType: event.entityType,
    entityId: event.entityId,
    operation: event.operation,
    message: event.message,
    createdAt,
    ...event.actor.origin,
  };
}

/**
 * Told about audit events after their transaction committed, to deliver them at once. Delivery may
 * fail: the outbox row written in the transaction is the durable record and is relayed later.
 */
export abstract class AuditEventPublisher {
  abstract publish(events: AuditEvent[]): Promise<void>;
}

export class NoopAuditEventPublisher extends AuditEventPublisher {
  async publish(): Promise<void> {}
}
