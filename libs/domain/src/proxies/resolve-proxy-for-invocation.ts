import { AuthenticateApiKey } from '../applications/authenticate-api-key';
import { requirePermission, Principal } from '../applications/principal';
import { hashApiKey } from '../applications/api-key';
import { DomainError, NotFoundError } from '../shared/domain-error';
import { AuthenticationThrottle, ClientAddress } from '../rate-limits/authentication-throttle';
import { AppliedLimit, applicationLimits, proxyLimits } from '../rate-limits/rate-limiter';
import { looksLikeProxyKey, Proxy } from './proxy';
import { ProxyRepository } from './proxy.repository';

/**
 * Names the proxy of an invocation and admits the caller (CONTRACT.md section 7). The repository may cache
 * (persistence's CachedProxyRepository), but an update or a delete is seen by every replica at once.
 */
export class ResolveProxyForInvocation {
  constructor(
    private readonly proxies: ProxyRepository,
    private readonly authenticate: AuthenticateApiKey,
    private readonly throttle?: AuthenticationThrottle,
  ) {}

  /**
   * The proxy and the rate limits this invocation counts against: the proxy's, and the calling application's when
   * the proxy requires one (then `caller` is that application: its key detokenizes the request). `client`: the
   * caller's address, whose failed keys (proxy or API) are throttled.
   */
  async execute(
    proxyKey: string | undefined,
    apiKey: string | undefined,
    client?: ClientAddress,
  ): Promise<{ proxy: Proxy; limits: readonly AppliedLimit[]; caller?: Principal }> {
    if (!proxyKey) throw new NotFoundError('Proxy');
    // An address over its limit is refused before the lookup, unless this proxy key was accepted from it before.
    this.throttle?.check(client, () => proxyCredential(proxyKey));
    const proxy = looksLikeProxyKey(proxyKey) ? await this.proxies.findByKey(proxyKey) : null;
    // A failed proxy-key lookup is throttled like a failed API key: the same guessing, by the same address.
    if (!proxy) return this.refuse(client, new NotFoundError('Proxy'));
    // The key named its proxy for `client`: served from there even while the address is blocked.
    if (this.throttle?.policy) this.throttle.succeeded(client, proxyCredentialOf(proxy));
    if (!proxy.requireAuth) return { proxy, limits: proxyLimits(proxy) };
    const { principal } = await this.authenticate.execute(apiKey, client);
    if (principal.tenantId !== proxy.tenantId) {
      throw new DomainError('forbidden', "The SVC-API-KEY belongs to another tenant than the proxy's");
    }
    requirePermission(principal, 'proxy:invoke');
    return { proxy, limits: [...proxyLimits(proxy), ...applicationLimits(principal)], caller: principal };
  }

  private async refuse(client: ClientAddress, error: NotFoundError): Promise<never> {
    if (this.throttle) return this.throttle.fail(client, error);
    throw error;
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
