import type { RateLimit } from '../rate-limits/rate-counter';

export interface Tenant {
  id: string;
  name: string;
  createdAt: Date;
  /** The rate limit of every application of the tenant that has none of its own; set by the operator (CLI). */
  defaultRateLimit?: RateLimit | null;
  /** How long its audit logs are kept (days); null or absent: forever. */
  logRetentionDays?: number | null;
}
