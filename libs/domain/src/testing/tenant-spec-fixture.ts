/** The starting point of the application specs: the in-memory ports with one tenant created in them. */
import { CreateApplication } from '../applications/application-commands';
import { principalOf } from '../applications/principal';
import { CreateTenant } from '../tenants/tenant-commands';
import { inMemoryPorts } from './in-memory-ports';

/**
 * `ports` (fresh in-memory ones by default) with the tenant 'acme' created: its first application as a principal
 * (`admin`) and its key (`adminKey`), and CreateApplication over the same ports.
 */
export async function withTenant(ports = inMemoryPorts()) {
  const created = await new CreateTenant(ports.uow, ports.clock).execute('acme');
  return {
    ...ports,
    admin: principalOf(created.application),
    adminKey: created.key,
    create: new CreateApplication(ports.uow, ports.clock, ports.expiry),
  };
}
