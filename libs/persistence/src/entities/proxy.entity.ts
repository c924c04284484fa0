import { Column, Entity, Index } from 'typeorm';
import { NamedResourceColumns } from './authored-columns';

@Entity({ name: 'proxies' })
@Index('proxies_tenant_created_idx', ['tenantId', 'createdAt', 'id'])
export class ProxyEntity extends NamedResourceColumns {
  /** The key's lookup hash (VaultCrypto.lookupHash): how an invocation finds its proxy without the key being stored. */
  @Index('proxies_key_hash_key', { unique: true })
  @Column({ name: 'key_hash', type: 'varchar', length: 64 })
  keyHash: string;

  /** The key itself, sealed (aad `proxy-key:<tenant>:<id>`): shown to the proxy's readers. */
  @Column({ name: 'key_sealed', type: 'bytea' })
  keySealed: Buffer;

  @Column({ name: 'destination_url', type: 'varchar', length: 400 })
  destinationUrl: string;

  @Column({ name: 'request_transform_code', type: 'text', nullable: true })
  requestTransformCode: string | null;

  @Column({ name: 'response_transform_code', type: 'text', nullable: true })
  responseTransformCode: string | null;

  /** The configuration (third-party secrets) as sealed JSON (aad `proxy-configuration:<tenant>:<id>`). */
  @Column({ name: 'configuration_sealed', type: 'bytea', nullable: true })
  configurationSealed: Buffer | null;

  @Column({ name: 'application_id', type: 'uuid', nullable: true })
  applicationId: string | null;

  @Column({ name: 'require_auth', type: 'boolean' })
  requireAuth: boolean;
}
