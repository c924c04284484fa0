import { Page, PageQuery, Proxy, ProxyFilter, ProxyRepository } from '@gatehouse/domain';
import { VersionStore } from './version-store';

// VersionBumpingCommitObserver bumps the counter named after the entity type of each committed change.
const VERSION = 'proxy';
const MAX_ENTRIES = 10_000;
// Bounds staleness should a version bump ever be lost (the writer could not reach Redis for seconds).
const MAX_AGE_MS = 60_000;

interface Entry {
  proxy: Proxy;
  version: number;
  at: number;
}

/**
 * Every invocation looks its proxy up by key; this keeps those reads in memory, with the same strong
 * invalidation as application keys: every committed change to any proxy bumps one shared version (in Redis
 * when replicas share one), and an entry is served only while that version, read before the entry was
 * loaded, is unchanged. An update or delete is therefore seen by every replica on its next request. Unknown
 * keys are never cached, and every other read goes to the database.
 */
export class CachedProxyRepository extends ProxyRepository {
  private readonly byKey = new Map<string, Entry>();

  constructor(
    private readonly inner: ProxyRepository,
    private readonly versions: VersionStore,
  ) {
    super();
  }

  async findByKey(key: string): Promise<Proxy | null> {
    const version = await this.versions.read(VERSION);
    const entry = this.byKey.get(key);
    if (version !== null && entry && entry.version === version && Date.now() - entry.at < MAX_AGE_MS) return entry.proxy;
    const proxy = await this.inner.findByKey(key);
    if (version === null || !proxy) {
      this.byKey.delete(key);
      return proxy;
    }
    if (this.byKey.size >= MAX_ENTRIES) this.byKey.delete(this.byKey.keys().next().value as string);
    // Shared by every request that hits the entry: frozen, so no caller can change what the next one sees.
    const frozen = Object.freeze({ ...proxy, configuration: proxy.configuration && Object.freeze({ ...proxy.configuration }) });
    this.byKey.set(key, { proxy: frozen, version, at: Date.now() });
    return frozen;
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
}
