export interface Tenant {
  id: string;
  name: string;
  createdAt: Date;
}

export abstract class TenantRepository {
  abstract insert(tenant: Tenant): Promise<void>;
  abstract count(): Promise<number>;
}
