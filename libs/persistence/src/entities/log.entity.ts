import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ActorType, AuditOperation } from '@gatehouse/domain';

/** Append-only: the migration's trigger refuses UPDATE and DELETE. Indexes are declared in the migration. */
@Entity({ name: 'logs' })
export class LogEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ name: 'actor_id', type: 'uuid', nullable: true })
  actorId: string | null;

  @Column({ name: 'actor_type', type: 'varchar', length: 16, nullable: true })
  actorType: ActorType | null;

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
  requestId: string | null;

  @Column({ name: 'source_ip', type: 'varchar', length: 64, nullable: true })
  sourceIp: string | null;

  @Column({ name: 'user_agent', type: 'varchar', length: 512, nullable: true })
  userAgent: string | null;

  /** Position in the tenant's hash chain (bigint; positions stay far below 2^53). */
  @Column({ type: 'bigint', transformer: { to: (v: number) => v, from: (v: string) => Number(v) } })
  seq: number;

  @Column({ type: 'bytea' })
  hash: Buffer;
}
