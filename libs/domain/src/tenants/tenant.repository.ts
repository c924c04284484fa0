import { Tenant } from './tenant';

export abstract class TenantRepository {
  abstract insert(tenant: Tenant): Promise<void>;
  abstract count(): Promise<number>;
}
