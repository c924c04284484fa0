import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApplicationRepository, AuthenticateApiKey, AuthenticationThrottle, Clock, LastUseRecorder } from '@gatehouse/domain';
import { DATABASE, Database, TypeormLastUseStore } from '@gatehouse/persistence';
import { StrictQuery } from '../http/strict-query';
import { useCase } from '../use-case.provider';
import { ApiKeyGuard } from './api-key.guard';
import { LastUseFlusher } from './last-use.flusher';
import { PrincipalResolvers } from './principal-resolver';

/**
 * Authentication for every feature: AuthenticateApiKey, built once and shared by the guard and the /proxy data plane,
 * with what it writes, the keys' last use (LastUseRecorder, written in the background by LastUseFlusher); the
 * principal resolvers (the svc bridge's); and the ApiKeyGuard on every route, which also checks its query string
 * (StrictQuery). Global, like the repositories it uses.
 */
@Global()
@Module({
  providers: [
    {
      provide: LastUseRecorder,
      inject: [DATABASE, Clock],
      useFactory: (database: Database, clock: Clock) => new LastUseRecorder(new TypeormLastUseStore(database.dataSource), clock),
    },
    LastUseFlusher,
    useCase(AuthenticateApiKey, [ApplicationRepository, Clock, AuthenticationThrottle, LastUseRecorder]),
    PrincipalResolvers,
    StrictQuery,
    { provide: APP_GUARD, useClass: ApiKeyGuard },
  ],
  exports: [AuthenticateApiKey, LastUseRecorder, PrincipalResolvers],
})
export class AuthModule {}
