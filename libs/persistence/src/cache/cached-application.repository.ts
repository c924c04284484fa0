import {
  AccessRule,
  AccessRuleCondition,
  AuditEvent,
  Application,
  ApplicationFilter,
  ApplicationRepository,
  CommitObserver,
  Page,
  PageQuery,
} from '@gatehouse/domain';
import { VersionedCache } from './versioned-cache';
import { VersionStore } from './version-store';
import { TOKEN_VERSION } from './cached-token.repository';

const VERSION = 'applications';
/** How long an application may be served stale should a version bump be lost. */
export const APPLICATION_MAX_AGE_MS = 10_000;

/**
 * Authentication reads an application on every request; this keeps those reads in memory. Every committed change
 * to any application bumps one shared version (CommitObserver below), and an entry is served only while that
 * version is unchanged, read before the entry was loaded: a regenerate, delete or permission change is seen by
 * every replica on its next request. Unknown keys are never cached.
 */
export class CachedApplicationRepository extends ApplicationRepository {
  private readonly byKeyHash: VersionedCache<Application>;
  private readonly byId: VersionedCache<Application>;

  constructor(
    private readonly inner: ApplicationRepository,
    versions: VersionStore,
  ) {
    super();
    // Shared by every request that hits the entry: frozen, so no caller can change what the next one sees, and so what
    // is derived from an entry (its principal, its rate limits, its response) can be made once (principalOf).
    this.byKeyHash = new VersionedCache(versions, VERSION, APPLICATION_MAX_AGE_MS, freezeApplication);
    this.byId = new VersionedCache(versions, VERSION, APPLICATION_MAX_AGE_MS, freezeApplication);
  }

  /** Hits and misses of key lookups (authentication), since start. */
  get keyCacheCounts(): Readonly<{ hits: number; misses: number }> {
    return this.byKeyHash.counts;
  }

  findByKeyHash(keyHash: string): Promise<Application | null> {
    return this.byKeyHash.get(keyHash, () => this.inner.findByKeyHash(keyHash));
  }

  override cachedByKeyHash(keyHash: string): Application | undefined {
    return this.byKeyHash.peek(keyHash);
  }

  async findById(tenantId: string, id: string): Promise<Application | null> {
    const app = await this.byId.get(id, () => this.inner.findById(tenantId, id));
    return app && app.tenantId === tenantId ? app : null;
  }

  findByIdForChange(tenantId: string, id: string): Promise<Application | null> {
    return this.inner.findByIdForChange(tenantId, id);
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

function freezeApplication(app: Application): Application {
  return Object.freeze({
    ...app,
    permissions: Object.freeze([...app.permissions]) as string[],
    rules: Object.freeze(
      app.rules.map((rule) =>
        Object.freeze({
          ...rule,
          permissions: Object.freeze([...rule.permissions]) as string[],
          ...(rule.conditions
            ? { conditions: Object.freeze(rule.conditions.map((condition) => Object.freeze({ ...condition }))) as AccessRuleCondition[] }
            : {}),
        }),
      ),
    ) as AccessRule[],
    rateLimit: app.rateLimit && Object.freeze({ ...app.rateLimit }),
    ...(app.tenantRateLimit ? { tenantRateLimit: Object.freeze({ ...app.tenantRateLimit }) } : {}),
  });
}

const TOKEN_ENTITY_TYPES = new Set(['token', 'card', 'bank']);

/** Bumps the version of each entity type a committed transaction touched. */
export class VersionBumpingCommitObserver extends CommitObserver {
  constructor(private readonly versions: VersionStore) {
    super();
  }

  async committed(events: AuditEvent[]): Promise<void> {
    // A tenant's default rate limit is read along with its applications: a tenant change invalidates them too.
    // Tokens (entity types token, card, bank) have one version, moved by updates and deletes only: a read or a
    // create changes no token a cache may hold.
    const touched = new Set<string>();
    for (const e of events) {
      if (TOKEN_ENTITY_TYPES.has(e.entityType)) {
        if (e.operation === 'update' || e.operation === 'delete') touched.add(TOKEN_VERSION);
      } else {
        touched.add(e.entityType === 'application' || e.entityType === 'tenant' ? VERSION : e.entityType);
      }
    }
    await Promise.all([...touched].map((name) => this.versions.bump(name)));
  }
}
