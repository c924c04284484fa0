import type { RateLimit } from '../rate-limits/rate-counter';
import { Tenant } from './tenant';

export abstract class TenantRepository {
  abstract insert(tenant: Tenant): Promise<void>;
  abstract count(): Promise<number>;
  abstract findById(id: string): Promise<Tenant | null>;
  /** Sets the tenant's default rate limit; false when there is no such tenant. */
  abstract setDefaultRateLimit(id: string, limit: RateLimit | null): Promise<boolean>;
}
