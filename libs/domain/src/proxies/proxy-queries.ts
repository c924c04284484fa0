import { AuthenticateApiKey } from '../applications/application-queries';
import { Principal, requirePermission } from '../applications/principal';
import { DomainError, NotFoundError } from '../shared/domain-error';
import { Page, PageQuery } from '../shared/page';
import { looksLikeProxyKey, Proxy } from './proxy';
import { ProxyFilter, ProxyRepository } from './proxy.repository';
import { AppliedLimit, applicationLimits, proxyLimits } from '../rate-limits/rate-limiter';
import { ClientAddress } from '../rate-limits/authentication-throttle';

export class GetProxy {
  constructor(private readonly proxies: ProxyRepository) {}

  async execute(principal: Principal, id: string): Promise<Proxy> {
    const proxy = await this.proxies.findById(principal.tenantId, id);
    if (!proxy) throw new NotFoundError('Proxy');
    return proxy;
  }
}

export class ListProxies {
  constructor(private readonly proxies: ProxyRepository) {}

  execute(principal: Principal, filter: ProxyFilter, page: PageQuery): Promise<Page<Proxy>> {
    return this.proxies.list(principal.tenantId, filter, page);
  }
}

/**
 * Names the proxy of an invocation and admits the caller (CONTRACT.md section 7). The repository may cache
 * (persistence's CachedProxyRepository), but an update or a delete is seen by every replica at once.
 */
export class ResolveProxyForInvocation {
  constructor(
    private readonly proxies: ProxyRepository,
    private readonly authenticate: AuthenticateApiKey,
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
    this.authenticate.checkClient(client, proxyKey);
    const proxy = looksLikeProxyKey(proxyKey) ? await this.proxies.findByKey(proxyKey) : null;
    if (!proxy) return this.authenticate.refuseProxyKey(client, new NotFoundError('Proxy'));
    this.authenticate.acceptedProxyKey(client, proxy);
    if (!proxy.requireAuth) return { proxy, limits: proxyLimits(proxy) };
    const { principal } = await this.authenticate.execute(apiKey, client);
    if (principal.tenantId !== proxy.tenantId) {
      throw new DomainError('forbidden', "The SVC-API-KEY belongs to another tenant than the proxy's");
    }
    requirePermission(principal, 'proxy:invoke');
    return { proxy, limits: [...proxyLimits(proxy), ...applicationLimits(principal)], caller: principal };
  }
}
