import { Module } from '@nestjs/common';
import { Clock, CreateTenant, GetTenant, ListTenants, RotateManagementKey, SetTenantRateLimit, TenantRepository, UnitOfWork } from '@gatehouse/domain';
import { useCase } from '../use-case.provider';

/** Tenants have no HTTP endpoint yet: their use cases serve the first start (ensureFirstTenant) and the CLI. */
@Module({
  providers: [
    useCase(CreateTenant, [UnitOfWork, Clock]),
    useCase(SetTenantRateLimit, [UnitOfWork]),
    // The operators' tenant commands (gatehouse tenant ...), run by the CLI or through the embedded control socket.
    useCase(GetTenant, [TenantRepository]),
    useCase(ListTenants, [TenantRepository]),
    useCase(RotateManagementKey, [UnitOfWork, Clock]),
  ],
  exports: [CreateTenant, SetTenantRateLimit, GetTenant, ListTenants, RotateManagementKey],
})
export class TenantsModule {}
