import { DataSource } from 'typeorm';

/** What the background work owes, read from the database for the metrics. */
export interface OperationalStats {
  /** Audit events committed but not yet in `logs`. */
  outboxRows: number;
  /** Age of the oldest of them, in seconds (0 when none). */
  outboxOldestAgeSeconds: number;
  /** How long the most overdue expiring application has outlived its `expires_at`, in seconds (0 when none). */
  expiryLagSeconds: number;
}

/** One round trip over indexed columns (`audit_outbox.created_at`, the partial index on `applications.expires_at`). */
export async function readOperationalStats(dataSource: DataSource): Promise<OperationalStats> {
  const [row] = (await dataSource.query(
    `SELECT (SELECT count(*) FROM audit_outbox)::float8 AS outbox_rows,
            COALESCE((SELECT extract(epoch FROM now() - min(created_at)) FROM audit_outbox), 0)::float8 AS outbox_age,
            COALESCE((SELECT extract(epoch FROM now() - min(expires_at)) FROM applications WHERE expires_at < now()), 0)::float8 AS expiry_lag`,
  )) as Array<{ outbox_rows: number; outbox_age: number; expiry_lag: number }>;
  return {
    outboxRows: Number(row?.outbox_rows ?? 0),
    outboxOldestAgeSeconds: Math.max(0, Number(row?.outbox_age ?? 0)),
    expiryLagSeconds: Math.max(0, Number(row?.expiry_lag ?? 0)),
  };
}
