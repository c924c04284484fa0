import { Module } from '@nestjs/common';
import { Clock, CreateTenant, UnitOfWork } from '@gatehouse/domain';
import { useCase } from '../use-case.provider';

/** Tenants have no HTTP endpoint yet: CreateTenant serves the first start (ensureFirstTenant) and the CLI. */
@Module({
  providers: [useCase(CreateTenant, [UnitOfWork, Clock])],
  exports: [CreateTenant],
})
export class TenantsModule {}
