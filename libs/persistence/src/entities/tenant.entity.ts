import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

@Entity({ name: 'tenants' })
export class TenantEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Index('tenants_name_key', { unique: true })
  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
