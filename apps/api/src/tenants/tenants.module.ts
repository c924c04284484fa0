import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '@gatehouse/config';
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
@Module({})
export class TenantsModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: TenantsModule,
      controllers: [TenantSettingsController],
      providers: [
        // LOG_RETENTION_DAYS: what a tenant without a period of its own gets, named in the audit log of a change.
        { provide: SetLogRetention, inject: [UnitOfWork], useFactory: (uow: UnitOfWork) => new SetLogRetention(uow, config.logRetentionDays) },
        useCase(CreateTenant, [UnitOfWork, Clock]),
        useCase(SetTenantRateLimit, [UnitOfWork]),
        // The operators' tenant commands (gatehouse tenant ...), run by the CLI or through the embedded control socket.
        useCase(GetTenant, [TenantRepository]),
        useCase(ListTenants, [TenantRepository]),
        useCase(RotateManagementKey, [UnitOfWork, Clock]),
      ],
      exports: [CreateTenant, SetTenantRateLimit, SetLogRetention, GetTenant, ListTenants, RotateManagementKey],
    };
  }
}
