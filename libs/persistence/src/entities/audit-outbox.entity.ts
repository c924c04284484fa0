import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ActorType, AuditOperation } from '@gatehouse/domain';

/**
 * Audit events written in the same transaction as the change they describe. A row stays here until its
 * log row exists, so a crash between commit and delivery loses nothing: the relay delivers it again.
 */
@Entity({ name: 'audit_outbox' })
export class AuditOutboxEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ name: 'actor_id', type: 'uuid', nullable: true })
  actorId: string | null;

  @Column({ name: 'actor_type', type: 'varchar', length: 16 })
  actorType: ActorType;

  @Column({ name: 'entity_type', type: 'varchar', length: 64 })
  entityType: string;

  @Column({ name: 'entity_id', type: 'varchar', length: 400 })
  entityId: string;

  @Column({ type: 'varchar', length: 16 })
  operation: AuditOperation;

  @Column({ type: 'text' })
  message: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'request_id', type: 'varchar', length: 128, nullable: true })
  requestId?: string;

  @Column({ name: 'source_ip', type: 'varchar', length: 64, nullable: true })
  sourceIp?: string;

  @Column({ name: 'user_agent', type: 'varchar', length: 512, nullable: true })
  userAgent?: string;
}
