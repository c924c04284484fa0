import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { applicationLimits, AuthenticateApiKey, RateLimiter, requirePermission } from '@gatehouse/domain';
import { clientAddressOf } from '../http/client-address';
import { requestOriginOf } from '../http/request-origin';
import { accessRecord } from '../http/access-log';
import { enforceRateLimits } from '../rate-limits/rate-limit-headers';
import { AuthenticatedRequest, PUBLIC_ROUTE, REQUIRED_PERMISSION } from './auth.decorators';
import { PrincipalResolvers } from './principal-resolver';

/**
 * Every route is authenticated by `SVC-API-KEY` unless marked public; 401 first, then the application's rate limit
 * (429; every authenticated request counts, svc calls included), then 403.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticate: AuthenticateApiKey,
    private readonly rateLimiter: RateLimiter,
    // E.g. transform `svc` calls, which arrive on the bridge's internal listener and act as the proxy's application.
    private readonly resolvers: PrincipalResolvers,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    const req = context.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    const header = req.headers['svc-api-key'];
    const viaSvc = await this.resolvers.principalOf(req);
    const principal = viaSvc ?? (await this.authenticate.execute(typeof header === 'string' ? header : undefined, clientAddressOf(req))).principal;
    req.principal = { ...principal, origin: requestOriginOf(req) };
    const record = accessRecord(req);
    record.tenantId = principal.tenantId;
    record.applicationId = principal.applicationId;
    if (viaSvc) record.svc = true;
    await enforceRateLimits(this.rateLimiter, context.switchToHttp().getResponse<Response>(), applicationLimits(principal));
    const permission = this.reflector.getAllAndOverride<string | undefined>(REQUIRED_PERMISSION, targets);
    if (permission) requirePermission(principal, permission);
    return true;
  }
}
