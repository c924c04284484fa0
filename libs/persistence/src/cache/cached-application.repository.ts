import { AuditEvent, Application, ApplicationFilter, ApplicationRepository, CommitObserver, Page, PageQuery } from '@gatehouse/domain';
import { VersionStore } from './version-store';

const VERSION = 'applications';
const MAX_ENTRIES = 10_000;
// Bounds staleness should a version bump ever be lost (the writer could not reach Redis for seconds).
const MAX_AGE_MS = 10_000;

interface Entry {
  app: Application | null;
  version: number;
  at: number;
}

/**
 * Authentication reads an application on every request; this keeps those reads in memory. Every committed change
 * to any application bumps one shared version (CommitObserver below), and an entry is served only while that
 * version is unchanged, read before the entry was loaded: a regenerate, delete or permission change is seen by
 * every replica on its next request. Unknown keys are never cached.
 */
export class CachedApplicationRepository extends ApplicationRepository {
  private readonly byKeyHash = new Map<string, Entry>();
  private readonly byId = new Map<string, Entry>();

  constructor(
    private readonly inner: ApplicationRepository,
    private readonly versions: VersionStore,
  ) {
    super();
  }

  findByKeyHash(keyHash: string): Promise<Application | null> {
    return this.cached(this.byKeyHash, keyHash, () => this.inner.findByKeyHash(keyHash));
  }

  async findById(tenantId: string, id: string): Promise<Application | null> {
    const app = await this.cached(this.byId, id, () => this.inner.findById(tenantId, id));
    return app && app.tenantId === tenantId ? app : null;
  }

  private async cached(map: Map<string, Entry>, key: string, load: () => Promise<Application | null>): Promise<Application | null> {
    const version = await this.versions.read(VERSION);
    const entry = map.get(key);
    if (version !== null && entry && entry.version === version && Date.now() - entry.at < MAX_AGE_MS) {
      return entry.app;
    }
    const app = await load();
    if (version === null || !app) {
      map.delete(key);
      return app;
    }
    if (map.size >= MAX_ENTRIES) map.delete(map.keys().next().value as string);
    map.set(key, { app, version, at: Date.now() });
    return app;
  }

  insert(app: Application): Promise<void> {
    return this.inner.insert(app);
  }
  update(app: Application): Promise<boolean> {
    return this.inner.update(app);
  }
  delete(tenantId: string, id: string): Promise<boolean> {
    return this.inner.delete(tenantId, id);
  }
  list(tenantId: string, filter: ApplicationFilter, page: PageQuery): Promise<Page<Application>> {
    return this.inner.list(tenantId, filter, page);
  }
  findExpired(now: Date, limit: number): Promise<Application[]> {
    return this.inner.findExpired(now, limit);
  }
}

/** Bumps the version of each entity type a committed transaction touched. */
export class VersionBumpingCommitObserver extends CommitObserver {
  constructor(private readonly versions: VersionStore) {
    super();
  }

  async committed(events: AuditEvent[]): Promise<void> {
    const touched = new Set(events.map((e) => (e.entityType === 'application' ? VERSION : e.entityType)));
    await Promise.all([...touched].map((name) => this.versions.bump(name)));
  }
}
