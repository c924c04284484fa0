import { Page, PageQuery } from '../shared/page';
import { Proxy } from './proxy';

export interface ProxyFilter {
  ids?: string[];
  /** Case-insensitive substring; `*` matches any run of characters, every other character is literal. */
  name?: string;
}

export abstract class ProxyRepository {
  abstract insert(proxy: Proxy): Promise<void>;
  /** Replaces the mutable fields; false when the row is gone. */
  abstract update(proxy: Proxy): Promise<boolean>;
  abstract delete(tenantId: string, id: string): Promise<boolean>;
  abstract findById(tenantId: string, id: string): Promise<Proxy | null>;
  /** Any tenant's proxy: the key alone names it on invocation. */
  abstract findByKey(key: string): Promise<Proxy | null>;
  abstract list(tenantId: string, filter: ProxyFilter, page: PageQuery): Promise<Page<Proxy>>;
  /** The size of the tenant's proxies' configurations, as stored (bytes), leaving `exceptId` out. */
  abstract configurationBytes(tenantId: string, exceptId?: string): Promise<number>;
}
