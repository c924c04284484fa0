import { Column, PrimaryColumn } from 'typeorm';
import type { RateLimit } from '@gatehouse/domain';

/** Who created a row and last changed it, and when: the columns applications, proxies and tokens share. */
export abstract class AuthoredColumns {
  @Column({ name: 'created_by', type: 'uuid', nullable: true })
  createdBy: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'modified_by', type: 'uuid', nullable: true })
  modifiedBy: string | null;

  @Column({ name: 'modified_at', type: 'timestamptz', nullable: true })
  modifiedAt: Date | null;
}

/** What applications and proxies share besides authorship: a uuid id, the tenant, a name and a rate limit. */
export abstract class NamedResourceColumns extends AuthoredColumns {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ name: 'rate_limit', type: 'jsonb', nullable: true })
  rateLimit: RateLimit | null;
}
