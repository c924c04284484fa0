import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { RateLimit } from '@gatehouse/domain';

@Entity({ name: 'tenants' })
export class TenantEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Index('tenants_name_key', { unique: true })
  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'default_rate_limit', type: 'jsonb', nullable: true })
  defaultRateLimit: RateLimit | null;

  @Column({ name: 'log_retention_days', type: 'integer', nullable: true })
  logRetentionDays: number | null;
}
