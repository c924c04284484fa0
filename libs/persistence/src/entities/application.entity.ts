import { Column, Entity, Index } from 'typeorm';
import type { AccessRule, ApplicationType } from '@gatehouse/domain';
import { NamedResourceColumns } from './authored-columns';

@Entity({ name: 'applications' })
@Index('applications_tenant_created_idx', ['tenantId', 'createdAt', 'id'])
export class ApplicationEntity extends NamedResourceColumns {
  @Column({ type: 'varchar', length: 16 })
  type: ApplicationType;

  @Column({ type: 'text', array: true })
  permissions: string[];

  @Column({ type: 'jsonb' })
  rules: AccessRule[];

  @Index('applications_key_hash_key', { unique: true })
  @Column({ name: 'key_hash', type: 'char', length: 64 })
  keyHash: string;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'can_create_expiring_applications', type: 'boolean', nullable: true })
  canCreateExpiringApplications: boolean | null;

  @Column({ name: 'previous_key_hash', type: 'char', length: 64, nullable: true })
  previousKeyHash: string | null;

  @Column({ name: 'previous_key_expires_at', type: 'timestamptz', nullable: true })
  previousKeyExpiresAt: Date | null;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;
}
