export type ActorType = 'application' | 'user' | 'system';
export type AuditOperation = 'create' | 'update' | 'delete' | 'read';

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

/** What a use case records; the unit of work gives it an id (which becomes the log id) and a time. */
export interface NewAuditEvent {
  tenantId: string;
  actor: Actor;
  entityType: string;
  entityId: string;
  operation: AuditOperation;
  message: string;
}

export interface AuditEvent {
  id: string;
  tenantId: string;
  actorId: string | null;
  actorType: ActorType;
  entityType: string;
  entityId: string;
  operation: AuditOperation;
  message: string;
  createdAt: Date;
  requestId?: string;
  sourceIp?: string;
  userAgent?: string;
}

/** The recorded event as it is stored and delivered: its id becomes the log id. */
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
