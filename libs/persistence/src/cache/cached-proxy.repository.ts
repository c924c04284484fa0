import { Page, PageQuery, Proxy, ProxyFilter, ProxyRepository } from '@gatehouse/domain';
import { VersionedCache } from './versioned-cache';
import { VersionStore } from './version-store';

// VersionBumpingCommitObserver bumps the counter named after the entity type of each committed change.
const VERSION = 'proxy';
/** How long a proxy may be served stale should a version bump be lost. */
export const PROXY_MAX_AGE_MS = 60_000;

/**
 * Every invocation looks its proxy up by key; this keeps those reads in memory, with the same strong
 * invalidation as application keys: every committed change to any proxy bumps one shared version (in Redis
 * when replicas share one), and an entry is served only while that version, read before the entry was
 * loaded, is unchanged. An update or delete is therefore seen by every replica on its next request. Unknown
 * keys are never cached, and every other read goes to the database.
 */
export class CachedProxyRepository extends ProxyRepository {
  private readonly byKey: VersionedCache<Proxy>;

  constructor(
    private readonly inner: ProxyRepository,
    versions: VersionStore,
  ) {
    super();
    // Shared by every request that hits the entry: frozen, so no caller can change what the next one sees.
    this.byKey = new VersionedCache(versions, VERSION, PROXY_MAX_AGE_MS, (proxy) =>
      Object.freeze({ ...proxy, configuration: proxy.configuration && Object.freeze({ ...proxy.configuration }) }),
    );
  }

  /** Hits and misses of proxy-key lookups (invocations), since start. */
  get keyCacheCounts(): Readonly<{ hits: number; misses: number }> {
    return this.byKey.counts;
  }

  findByKey(key: string): Promise<Proxy | null> {
    return this.byKey.get(key, () => this.inner.findByKey(key));
  }

  insert(proxy: Proxy): Promise<void> {
    return this.inner.insert(proxy);
  }
  update(proxy: Proxy): Promise<boolean> {
    return this.inner.update(proxy);
  }
  delete(tenantId: string, id: string): Promise<boolean> {
    return this.inner.delete(tenantId, id);
  }
  findById(tenantId: string, id: string): Promise<Proxy | null> {
    return this.inner.findById(tenantId, id);
  }
  list(tenantId: string, filter: ProxyFilter, page: PageQuery): Promise<Page<Proxy>> {
    return this.inner.list(tenantId, filter, page);
  }
  configurationBytes(tenantId: string, exceptId?: string): Promise<number> {
    return this.inner.configurationBytes(tenantId, exceptId);
  }
}
