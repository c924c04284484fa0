import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApplicationRepository, AuthenticateApiKey, AuthenticationThrottle, Clock, LastUseRecorder } from '@gatehouse/domain';
import { StrictQuery } from '../http/strict-query';
import { useCase } from '../use-case.provider';
import { ApiKeyGuard } from './api-key.guard';
import { PrincipalResolvers } from './principal-resolver';

/**
 * Authentication for every feature: AuthenticateApiKey, built once and shared by the guard, the /proxy data plane and
 * the svc bridge; the principal resolvers; and the ApiKeyGuard on every route, which also checks its query string (StrictQuery). Global, like the repositories it uses.
 */
@Global()
@Module({
  providers: [
    useCase(AuthenticateApiKey, [ApplicationRepository, Clock, AuthenticationThrottle, LastUseRecorder]),
    PrincipalResolvers,
    StrictQuery,
    { provide: APP_GUARD, useClass: ApiKeyGuard },
  ],
  exports: [AuthenticateApiKey, PrincipalResolvers],
})
export class AuthModule {}
