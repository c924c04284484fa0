import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Principal } from '@gatehouse/domain';

export const PUBLIC_ROUTE = 'gatehouse:public';
export const REQUIRED_PERMISSION = 'gatehouse:permission';

/** No API key needed (health, OpenAPI). */
export const PublicRoute = () => SetMetadata(PUBLIC_ROUTE, true);

/** The permission an endpoint needs, checked by the domain's rule (`requirePermission`) before the handler runs. */
export const RequirePermission = (permission: string) => SetMetadata(REQUIRED_PERMISSION, permission);

export interface AuthenticatedRequest {
  principal?: Principal;
}

export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const principal = ctx.switchToHttp().getRequest<AuthenticatedRequest>().principal;
  if (!principal) throw new Error('CurrentPrincipal used on a route without authentication');
  return principal;
});
