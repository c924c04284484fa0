import { Column } from 'typeorm';

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
