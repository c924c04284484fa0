import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { RateLimit } from '@gatehouse/domain';

@Entity({ name: 'tenants' })
export class TenantEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'default_rate_limit', type: 'jsonb', nullable: true })
  defaultRateLimit: RateLimit | null;
}
