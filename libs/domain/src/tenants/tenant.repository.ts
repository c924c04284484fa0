import type { RateLimit } from '../rate-limits/rate-counter';
import { Tenant } from './tenant';

export abstract class TenantRepository {
  /** Throws ConflictError when the id or the name is taken (tenant names are unique). */
  abstract insert(tenant: Tenant): Promise<void>;
  abstract count(): Promise<number>;
  abstract findById(id: string): Promise<Tenant | null>;
  abstract findByName(name: string): Promise<Tenant | null>;
  /** Every tenant, oldest first: operators list them from the CLI, there are few. */
  abstract list(): Promise<Tenant[]>;
  /** Sets the tenant's default rate limit; false when there is no such tenant. */
  abstract setDefaultRateLimit(id: string, limit: RateLimit | null): Promise<boolean>;
  /** Sets the tenant's log retention period (days, null: forever); false when there is no such tenant. */
  abstract setLogRetention(id: string, days: number | null): Promise<boolean>;
}
