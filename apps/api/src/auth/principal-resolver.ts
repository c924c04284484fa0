import type { IncomingMessage } from 'node:http';
import { Injectable } from '@nestjs/common';
import type { Principal } from '@gatehouse/domain';

/**
 * A way other than SVC-API-KEY for a request to carry its principal (the svc bridge's internal listener, where
 * transform calls act as the proxy's application). Undefined, at once, means "not mine" (what nearly every request hears,
 * so it costs no promise); else the principal, or a rejection that refuses the request.
 */
export interface PrincipalResolver {
  principalOf(req: IncomingMessage): Promise<Principal> | undefined;
}

/**
 * The resolvers registered at start (the svc bridge registers itself), asked by the ApiKeyGuard before the key:
 * the guard knows no feature that brings its own way of authenticating.
 */
@Injectable()
export class PrincipalResolvers {
  private readonly resolvers: PrincipalResolver[] = [];

  register(resolver: PrincipalResolver): void {
    this.resolvers.push(resolver);
  }

  principalOf(req: IncomingMessage): Promise<Principal> | undefined {
    for (const resolver of this.resolvers) {
      const principal = resolver.principalOf(req);
      if (principal) return principal;
    }
    return undefined;
  }
}
