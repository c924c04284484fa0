import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Database } from '@gatehouse/persistence';
import { logStreamsModule, persistenceAndJobsModules } from '@gatehouse/runtime';
import { AppConfig } from '@gatehouse/config';
import { ApplicationsModule } from './applications/applications.module';
import { AuthModule } from './auth/auth.module';
import { Draining } from './health/draining';
import { HealthController } from './health/health.controller';
import { ProblemDetailsFilter } from './http/problem-details';
import { PermissionsController } from './permissions/permissions.controller';
import { ProxiesModule } from './proxies/proxies.module';
import { LogsModule } from './logs/logs.module';
import { LogStreamsApiModule } from './logs/streams/log-streams.module';
import { RateLimitsModule } from './rate-limits/rate-limits.module';
import { TenantsModule } from './tenants/tenants.module';
import { TokensModule } from './tokens/tokens.module';

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
        ...persistenceAndJobsModules(options.database, options.config, { runJobs: options.runJobs }),
        RateLimitsModule.forRoot(options.config),
        AuthModule,
        ApplicationsModule,
        TenantsModule.forRoot(options.config),
        ProxiesModule.forRoot(options.config),
        LogsModule,
        LogStreamsApiModule.forRoot(options.config),
        // Where jobs run in this process (no Redis), the streams are delivered here too.
        ...(options.runJobs ? [logStreamsModule(options.config)] : []),
        TokensModule,
      ],
      controllers: [HealthController, PermissionsController],
      providers: [{ provide: APP_FILTER, useClass: ProblemDetailsFilter }, Draining],
    };
  }
}
