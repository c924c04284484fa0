import { DataSource } from 'typeorm';
import { ApplicationUse, LastUseStore } from '@gatehouse/domain';

/**
 * Last uses in one statement, outside any transaction or audit trail (a use changes nothing an auditor follows, and
 * must not invalidate the key caches), and never backwards: a replica with an older minute leaves a newer one alone.
 */
export class TypeormLastUseStore extends LastUseStore {
  constructor(private readonly dataSource: DataSource) {
    super();
  }

  async recordLastUse(uses: ApplicationUse[]): Promise<void> {
    if (uses.length === 0) return;
    await this.dataSource.query(
      `UPDATE "applications" AS a SET "last_used_at" = v.at
       FROM unnest($1::uuid[], $2::timestamptz[]) AS v(id, at)
       WHERE a."id" = v.id AND (a."last_used_at" IS NULL OR a."last_used_at" < v.at)`,
      [uses.map((use) => use.applicationId), uses.map((use) => use.at.toISOString())],
    );
  }
}
