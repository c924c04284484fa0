import { Module } from '@nestjs/common';
import { Clock, CreateTenant, SetTenantRateLimit, UnitOfWork } from '@gatehouse/domain';
import { useCase } from '../use-case.provider';

/** Tenants have no HTTP endpoint yet: their use cases serve the first start (ensureFirstTenant) and the CLI. */
@Module({
  providers: [useCase(CreateTenant, [UnitOfWork, Clock]), useCase(SetTenantRateLimit, [UnitOfWork])],
  exports: [CreateTenant, SetTenantRateLimit],
})
export class TenantsModule {}
