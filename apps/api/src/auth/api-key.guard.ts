import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { AppliedLimit, applicationLimits, AuthenticateApiKey, Principal, RateLimiter, RateLimitOutcome, requirePermission } from '@gatehouse/domain';
import { clientAddressOf } from '../http/client-address';
import { accessRecord } from '../http/access-log';
import { StrictQuery } from '../http/strict-query';
import { applyRateLimitOutcome } from '../rate-limits/rate-limit-headers';
import { AuthenticatedRequest, PUBLIC_ROUTE, REQUIRED_PERMISSION } from './auth.decorators';
import { ForwardedForWarning } from './forwarded-for-warning';
import { PrincipalResolvers } from './principal-resolver';
import { RequestPrincipal } from './request-principal';

/** What a route's decorators say about its authentication, read once per handler. */
interface RouteAuth {
  isPublic: boolean;
  permission: string | undefined;
}

/**
 * Every route is authenticated by `SVC-API-KEY` unless marked public; 401 first, then the application's rate limit
 * (429; every authenticated request counts, svc calls included), then 403; then, on public routes too, the query
 * string's 400 for a name the route does not declare (StrictQuery), before any pipe validates a body or a query.
 *
 * The count does not wait for the key's check: when the key cache holds the key's application, its limit is counted
 * at once, alongside the check (with Redis, the cache-version read and the rate-limit script are two round trips at the
 * same time instead of one after the other). The count is used only when the verified principal has the same limit;
 * otherwise it is made again with the verified one. So a key that fails its check (revoked a moment ago) may have
 * taken one unit from its application's limit, and a request after a limit change may have taken one from the old.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly routes = new WeakMap<object, RouteAuth>();

  constructor(
    private readonly reflector: Reflector,
    private readonly authenticate: AuthenticateApiKey,
    private readonly rateLimiter: RateLimiter,
    // E.g. transform `svc` calls, which arrive on the bridge's internal listener and act as the proxy's application.
    private readonly resolvers: PrincipalResolvers,
    private readonly strictQuery: StrictQuery,
    private readonly forwardedFor: ForwardedForWarning,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const route = this.routeOf(context);
    if (!route.isPublic) return this.authenticateRequest(context, route);
    this.strictQuery.check(context);
    return true;
  }

  private async authenticateRequest(context: ExecutionContext, route: RouteAuth): Promise<boolean> {
    const http = context.switchToHttp();
    const req = http.getRequest<Request & AuthenticatedRequest>();
    this.forwardedFor.observe(req);
    const header = req.headers['svc-api-key'];
    const key = typeof header === 'string' ? header : undefined;
    const claimed = this.resolvers.principalOf(req);
    const viaSvc = claimed && (await claimed);
    let early: EarlyCount | undefined;
    const principal =
      viaSvc ??
      (
        await this.authenticate.execute(
          key,
          () => clientAddressOf(req),
          (candidate) => (early = this.countEarly(candidate)),
        )
      ).principal;
    req.principal = new RequestPrincipal(principal, req);
    const record = accessRecord(req);
    record.tenantId = principal.tenantId;
    record.applicationId = principal.applicationId;
    if (viaSvc) record.svc = true;
    const limits = applicationLimits(principal);
    const outcome = early && sameLimits(early.limits, limits) ? early.outcome : limits.length > 0 ? this.rateLimiter.admit(limits) : undefined;
    if (outcome) applyRateLimitOutcome(http.getResponse<Response>(), outcome instanceof Promise ? await outcome : outcome);
    if (route.permission) requirePermission(principal, route.permission);
    this.strictQuery.check(context);
    return true;
  }

  private routeOf(context: ExecutionContext): RouteAuth {
    const handler = context.getHandler();
    let route = this.routes.get(handler);
    if (!route) {
      const targets = [handler, context.getClass()];
      route = {
        isPublic: this.reflector.getAllAndOverride<boolean | undefined>(PUBLIC_ROUTE, targets) === true,
        permission: this.reflector.getAllAndOverride<string | undefined>(REQUIRED_PERMISSION, targets),
      };
      this.routes.set(handler, route);
    }
    return route;
  }

  /** Starts counting the request against the limit of a not yet verified principal (see the class's comment). */
  private countEarly(candidate: Principal): EarlyCount | undefined {
    const limits = applicationLimits(candidate);
    return limits.length > 0 ? { limits, outcome: this.rateLimiter.admit(limits) } : undefined;
  }
}

interface EarlyCount {
  limits: readonly AppliedLimit[];
  outcome: RateLimitOutcome | undefined | Promise<RateLimitOutcome | undefined>;
}

function sameLimits(a: readonly AppliedLimit[], b: readonly AppliedLimit[]): boolean {
  return (
    a === b ||
    (a.length === b.length &&
      a.every(
        (x, i) => x.entity === b[i]!.entity && x.id === b[i]!.id && x.limit.limit === b[i]!.limit.limit && x.limit.windowSeconds === b[i]!.limit.windowSeconds,
      ))
  );
}
