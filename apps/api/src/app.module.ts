import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import {
  ApplicationExpiryScheduler,
  ApplicationRepository,
  AuthenticateApiKey,
  AuthenticationThrottle,
  LastUseRecorder,
  CheckpointSigner,
  Clock,
  CreateApplication,
  CreateTenant,
  DeleteApplication,
  GetApplication,
  ListApplications,
  RegenerateApplicationKey,
  SetTenantRateLimit,
  UnitOfWork,
  UpdateApplication,
} from '@gatehouse/domain';
import { Database, PersistenceModule } from '@gatehouse/persistence';
import { BackgroundJobsModule } from '@gatehouse/queue';
import { AppConfig, resolveLogSigningKey } from '@gatehouse/config';
import { ApplicationsController } from './applications/applications.controller';
import { ApiKeyGuard } from './auth/api-key.guard';
import { HealthController } from './health/health.controller';
import { ProblemDetailsFilter } from './http/problem-details';
import { StrictQueryInterceptor } from './http/strict-query';
import { PermissionsController } from './permissions/permissions.controller';
import { useCase } from './use-case.provider';
import { ProxiesModule } from './proxies/proxies.module';
import { LogsModule } from './logs/logs.module';
import { RateLimitsModule } from './rate-limits/rate-limits.module';

export interface ApiModuleOptions {
  config: AppConfig;
  database: Database;
  /** Run the worker's jobs in this process (no Redis, `npm start`). */
  runJobs: boolean;
}

@Module({})
export class AppModule {
  static register(options: ApiModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        PersistenceModule.forRoot(options.database, { redisUrl: options.config.redisUrl }),
        BackgroundJobsModule.forRoot({
          runJobs: options.runJobs,
          redisUrl: options.config.redisUrl,
          prefix: options.config.queuePrefix,
          checkpointSigner: new CheckpointSigner(() => resolveLogSigningKey(options.config).key),
          checkpointIntervalMs: options.config.logCheckpointIntervalMs,
        }),
        RateLimitsModule.forRoot(options.config),
        ProxiesModule.forRoot(options.config),
        LogsModule,
      ],
      controllers: [HealthController, PermissionsController, ApplicationsController],
      providers: [
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        { provide: APP_FILTER, useClass: ProblemDetailsFilter },
        { provide: APP_INTERCEPTOR, useClass: StrictQueryInterceptor },
        useCase(AuthenticateApiKey, [ApplicationRepository, Clock, AuthenticationThrottle, LastUseRecorder]),
        useCase(CreateApplication, [UnitOfWork, Clock, ApplicationExpiryScheduler]),
        useCase(UpdateApplication, [UnitOfWork, Clock]),
        useCase(RegenerateApplicationKey, [UnitOfWork, Clock]),
        useCase(DeleteApplication, [UnitOfWork]),
        useCase(GetApplication, [ApplicationRepository]),
        useCase(ListApplications, [ApplicationRepository]),
        useCase(CreateTenant, [UnitOfWork, Clock]),
        useCase(SetTenantRateLimit, [UnitOfWork]),
      ],
    };
  }
}
