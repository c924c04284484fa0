import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { RateLimit } from '@gatehouse/domain';

@Entity({ name: 'proxies' })
@Index('proxies_tenant_created_idx', ['tenantId', 'createdAt', 'id'])
export class ProxyEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Index('proxies_key_key', { unique: true })
  @Column({ type: 'varchar', length: 64 })
  key: string;

  @Column({ name: 'destination_url', type: 'varchar', length: 400 })
  destinationUrl: string;

  @Column({ name: 'request_transform_code', type: 'text', nullable: true })
  requestTransformCode: string | null;

  @Column({ name: 'response_transform_code', type: 'text', nullable: true })
  responseTransformCode: string | null;

  @Column({ type: 'jsonb', nullable: true })
  configuration: Record<string, string> | null;

  @Column({ name: 'application_id', type: 'uuid', nullable: true })
  applicationId: string | null;

  @Column({ name: 'require_auth', type: 'boolean' })
  requireAuth: boolean;

  @Column({ name: 'created_by', type: 'uuid', nullable: true })
  createdBy: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'modified_by', type: 'uuid', nullable: true })
  modifiedBy: string | null;

  @Column({ name: 'modified_at', type: 'timestamptz', nullable: true })
  modifiedAt: Date | null;

  @Column({ name: 'rate_limit', type: 'jsonb', nullable: true })
  rateLimit: RateLimit | null;
}
