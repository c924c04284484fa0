import { Module } from '@nestjs/common';
import {
  Clock,
  CreateTenant,
  GetTenant,
  ListTenants,
  RotateManagementKey,
  SetLogRetention,
  SetTenantRateLimit,
  TenantRepository,
  UnitOfWork,
} from '@gatehouse/domain';
import { useCase } from '../use-case.provider';
import { TenantSettingsController } from './tenant-settings.controller';

/**
 * The tenant's own settings over HTTP (`/tenant/settings`: its log retention); the other tenant use cases serve the
 * first start (ensureFirstTenant) and the CLI.
 */
@Module({
  controllers: [TenantSettingsController],
  providers: [
    useCase(SetLogRetention, [UnitOfWork]),
    useCase(CreateTenant, [UnitOfWork, Clock]),
    useCase(SetTenantRateLimit, [UnitOfWork]),
    // The operators' tenant commands (gatehouse tenant ...), run by the CLI or through the embedded control socket.
    useCase(GetTenant, [TenantRepository]),
    useCase(ListTenants, [TenantRepository]),
    useCase(RotateManagementKey, [UnitOfWork, Clock]),
  ],
  exports: [CreateTenant, SetTenantRateLimit, SetLogRetention, GetTenant, ListTenants, RotateManagementKey],
})
export class TenantsModule {}
