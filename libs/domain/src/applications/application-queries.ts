import { Clock } from '../shared/clock';
import { AuthenticationError, EscalationError, NotFoundError } from '../shared/domain-error';
import { requireAuthorityOver } from './authority';
import { AuthenticationThrottle, ClientAddress } from '../rate-limits/authentication-throttle';
import { LastUseRecorder } from './last-use';
import { Page, PageQuery } from '../shared/page';
import { looksLikeApiKey, hashApiKey } from './api-key';
import { Application } from './application';
import { ApplicationFilter, ApplicationRepository } from './application.repository';
import { Principal, principalOf } from './principal';
import type { Proxy } from '../proxies/proxy';

export class GetApplication {
  constructor(private readonly applications: ApplicationRepository) {}

  async execute(principal: Principal, id: string): Promise<Application> {
    const app = await this.applications.findById(principal.tenantId, id);
    if (!app) throw new NotFoundError('Application');
    return app;
  }
}

export class ListApplications {
  constructor(private readonly applications: ApplicationRepository) {}

  execute(principal: Principal, filter: ApplicationFilter, page: PageQuery): Promise<Page<Application>> {
    return this.applications.list(principal.tenantId, filter, page);
  }
}

/**
 * Resolves an `SVC-API-KEY` to its application on every request. The repository may cache (persistence's
 * CachedApplicationRepository, invalidated by a shared version), but a regenerate, delete or permission
 * change is seen by every replica on the very next request. A key presented and refused counts as a failure of
 * `client` (its address) in the throttle; a missing key is no guess and is not counted.
 */
export class AuthenticateApiKey {
  constructor(
    private readonly applications: ApplicationRepository,
    private readonly clock: Clock,
    private readonly throttle?: AuthenticationThrottle,
    private readonly lastUse?: LastUseRecorder,
  ) {}

  /**
   * `client` may be a function, called only when the address is needed (a throttled address is known, or the key
   * fails). `onCandidate`, when given, is called before the key is verified with the principal the repository's memory
   * holds for it, if any (unverified: the key may have been revoked since): for work that may start alongside the
   * verification and be dropped when the verified principal differs (the guard's rate-limit count).
   */
  async execute(
    key: string | undefined,
    client?: ClientAddress,
    onCandidate?: (candidate: Principal) => void,
  ): Promise<{ principal: Principal; application: Application }> {
    if (!key) throw new AuthenticationError('The SVC-API-KEY header is required');
    const keyHash = looksLikeApiKey(key) ? hashApiKey(key) : undefined;
    // A blocked address is refused here, except for a key that authenticated from it before (its neighbours').
    this.throttle?.check(client, keyHash);
    if (keyHash === undefined) return this.refuse(client, 'The SVC-API-KEY is not valid');
    if (onCandidate) {
      const candidate = this.applications.cachedByKeyHash(keyHash);
      if (candidate) onCandidate(principalOf(candidate));
    }
    const application = await this.applications.findByKeyHash(keyHash);
    if (!application) return this.refuse(client, 'The SVC-API-KEY is not valid');
    // The lookup also finds the key a regenerate replaced; it counts only until its overlap ends.
    if (application.keyHash !== keyHash && !this.previousKeyValid(application, keyHash)) {
      return this.refuse(client, 'The SVC-API-KEY is not valid');
    }
    if (this.expired(application)) return this.refuse(client, 'The application of this SVC-API-KEY has expired');
    this.lastUse?.touch(application.id);
    this.throttle?.succeeded(client, keyHash);
    const principal = principalOf(application);
    return { principal: application.keyHash === keyHash ? principal : { ...principal, viaPreviousKey: true }, application };
  }

  /** Throttles a failed proxy-key lookup like a failed API key: the same guessing, by the same address. */
  async refuseProxyKey(client: ClientAddress, error: NotFoundError): Promise<never> {
    if (this.throttle) return this.throttle.fail(client, error);
    throw error;
  }

  /**
   * Before a proxy-key lookup: an address over its limit is refused without one, unless this proxy key was accepted
   * from it before (`acceptedProxyKey`).
   */
  checkClient(client: ClientAddress, proxyKey: string): void {
    this.throttle?.check(client, () => proxyCredential(proxyKey));
  }

  /** `proxy`'s key named it for `client`: served from there even while the address is blocked. */
  acceptedProxyKey(client: ClientAddress, proxy: Proxy): void {
    if (this.throttle?.policy) this.throttle.succeeded(client, proxyCredentialOf(proxy));
  }

  private async refuse(client: ClientAddress, message: string): Promise<never> {
    const error = new AuthenticationError(message);
    if (this.throttle) return this.throttle.fail(client, error);
    throw error;
  }

  /**
   * The principal of a proxy's application, for its transforms' svc calls (which carry no key). `writerId`: the
   * application that last wrote the proxy (its modified_by), whose authority over the bound application is checked
   * again on every call, as it was when it wrote it (requireAuthorityOver): powers given to the bound application
   * since, beyond the writer's, would otherwise reach code the writer chose. A writer gone (deleted, expired) vouches
   * for nothing: the proxy must be written again by an application that holds what its application can do.
   */
  async asApplication(tenantId: string, applicationId: string, writerId?: string | null): Promise<Principal> {
    const application = await this.applications.findById(tenantId, applicationId);
    if (!application) throw new AuthenticationError("The proxy's application no longer exists");
    if (this.expired(application)) throw new AuthenticationError("The proxy's application has expired");
    if (writerId !== undefined && writerId !== applicationId) {
      const writer = writerId === null ? null : await this.applications.findById(tenantId, writerId);
      if (!writer || this.expired(writer)) {
        throw new EscalationError("svc is refused: the application that last wrote this proxy no longer exists; write the proxy again with an application that holds what the proxy's application can do");
      }
      try {
        requireAuthorityOver(principalOf(writer), application, 'lend svc to');
      } catch (error) {
        if (!(error instanceof EscalationError)) throw error;
        throw new EscalationError(`svc is refused: ${error.message.replace(/^This application/, 'the application that last wrote this proxy')}`);
      }
    }
    return principalOf(application);
  }

  private previousKeyValid(application: Application, keyHash: string): boolean {
    return (
      application.previousKeyHash === keyHash &&
      application.previousKeyExpiresAt !== null &&
      application.previousKeyExpiresAt.getTime() > this.clock.now().getTime()
    );
  }

  private expired(application: Application): boolean {
    return application.expiresAt !== null && application.expiresAt.getTime() <= this.clock.now().getTime();
  }
}

/** What the throttle remembers a proxy key by: a hash, apart from API keys' hashes. */
function proxyCredential(proxyKey: string): string {
  return `proxy:${hashApiKey(proxyKey)}`;
}

/**
 * A proxy's key's credential, hashed once per Proxy object: a caching repository hands every invocation of a proxy the
 * same (frozen) object until the proxy changes, and a hash per request is what the throttle would cost otherwise.
 */
const credentials = new WeakMap<Proxy, string>();
function proxyCredentialOf(proxy: Proxy): string {
  let credential = credentials.get(proxy);
  if (credential === undefined) {
    credential = proxyCredential(proxy.key);
    credentials.set(proxy, credential);
  }
  return credential;
}
