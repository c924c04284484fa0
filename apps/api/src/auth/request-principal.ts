import type { Request } from 'express';
import type { AccessRule, ApplicationType, Principal, RateLimit, RequestOrigin } from '@gatehouse/domain';
import { requestOriginOf } from '../http/request-origin';

/**
 * The principal of one request: the key's principal (shared by every request with the key) and where the request came
 * from (`origin`, for the audit logs it causes), worked out only when something reads it: most requests change
 * nothing, and the client's address costs a look at X-Forwarded-For and the trusted proxies.
 */
export class RequestPrincipal implements Principal {
  readonly applicationId: string;
  readonly tenantId: string;
  readonly type: ApplicationType;
  readonly permissions: ReadonlySet<string>;
  readonly rules: readonly AccessRule[] | undefined;
  readonly canCreateExpiringApplications: boolean;
  readonly rateLimit: RateLimit | null | undefined;
  readonly tenantRateLimit: RateLimit | null | undefined;
  readonly viaPreviousKey: boolean | undefined;
  readonly #req: Request;
  #origin: RequestOrigin | undefined;

  constructor(principal: Principal, req: Request) {
    // Every member of Principal but `origin` (the getter below); COPIED makes a member added to Principal a compile
    // error until it is copied here.
    this.applicationId = principal.applicationId;
    this.tenantId = principal.tenantId;
    this.type = principal.type;
    this.permissions = principal.permissions;
    this.rules = principal.rules;
    this.canCreateExpiringApplications = principal.canCreateExpiringApplications;
    this.rateLimit = principal.rateLimit;
    this.tenantRateLimit = principal.tenantRateLimit;
    this.viaPreviousKey = principal.viaPreviousKey;
    this.#req = req;
  }

  get origin(): RequestOrigin {
    return (this.#origin ??= requestOriginOf(this.#req));
  }
}

type Copied =
  'applicationId' | 'tenantId' | 'type' | 'permissions' | 'rules' | 'canCreateExpiringApplications' | 'rateLimit' | 'tenantRateLimit' | 'viaPreviousKey';
/** true only while every member of Principal but `origin` is among those RequestPrincipal copies. */
export const COPIED: [Exclude<keyof Principal, Copied | 'origin'>] extends [never] ? true : never = true;
