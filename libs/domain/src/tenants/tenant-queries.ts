import { NotFoundError } from '../shared/domain-error';
import { Tenant } from './tenant';
import { TenantRepository } from './tenant.repository';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A tenant by its id or, failing that, by its (unique) name: operators type either. */
export async function findTenant(tenants: TenantRepository, idOrName: string): Promise<Tenant> {
  const tenant = (UUID.test(idOrName) ? await tenants.findById(idOrName.toLowerCase()) : null) ?? (await tenants.findByName(idOrName));
  if (!tenant) throw new NotFoundError(`Tenant '${idOrName}'`);
  return tenant;
}

export class GetTenant {
  constructor(private readonly tenants: TenantRepository) {}

  execute(idOrName: string): Promise<Tenant> {
    return findTenant(this.tenants, idOrName);
  }
}

export class ListTenants {
  constructor(private readonly tenants: TenantRepository) {}

  execute(): Promise<Tenant[]> {
    return this.tenants.list();
  }
}
