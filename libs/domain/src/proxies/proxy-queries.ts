import { Principal } from '../applications/principal';
import { NotFoundError } from '../shared/domain-error';
import { Page, PageQuery } from '../shared/page';
import { Proxy } from './proxy';
import { ProxyFilter, ProxyRepository } from './proxy.repository';

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
