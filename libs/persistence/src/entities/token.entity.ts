import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { TokenType } from '@gatehouse/domain';
import { AuthoredColumns } from './authored-columns';

/** A vault token: its data only in `sealed` (see the Tokens1764100200000 migration). */
@Entity({ name: 'tokens' })
@Index('tokens_tenant_created_idx', ['tenantId', 'createdAt', 'id'])
@Index('tokens_fingerprint_idx', ['tenantId', 'fingerprint'])
export class TokenEntity extends AuthoredColumns {
  @PrimaryColumn({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @PrimaryColumn({ type: 'varchar', length: 400 })
  id: string;

  @Column({ type: 'varchar', length: 32 })
  type: TokenType;

  @Column({ type: 'bytea' })
  sealed: Buffer;

  @Column({ type: 'json', nullable: true })
  // A MaskTemplate (string, or object of them); typed loosely: TypeORM's deep partial types cannot follow the recursion.
  mask: string | object | null;

  @Column({ type: 'text', array: true })
  containers: string[];

  // GIN-indexed by the migration (tokens_container_prefixes_idx, and tokens_metadata_idx): an entity cannot declare GIN.
  @Column({ name: 'container_prefixes', type: 'text', array: true })
  containerPrefixes: string[];

  @Column({ type: 'jsonb' })
  metadata: Record<string, string>;

  @Column({ type: 'varchar', length: 128, nullable: true })
  fingerprint: string | null;

  @Column({ name: 'fingerprint_expression', type: 'text', nullable: true })
  fingerprintExpression: string | null;

  @Index('tokens_expires_at_idx')
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;
}
