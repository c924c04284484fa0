import { ExpiredToken, Page, Token, TokenFilter, TokenPageQuery, TokenRepository, TokenType, TokenVisibility } from '@gatehouse/domain';
import { VersionedCache } from './versioned-cache';
import { VersionStore } from './version-store';

/** The version VersionBumpingCommitObserver bumps when a token is updated or deleted (never on a read or create). */
export const TOKEN_VERSION = 'token';
/** How long a token may be served stale should a version bump be lost. */
export const TOKEN_MAX_AGE_MS = 60_000;
/** Tokens sealed larger than this are read from the database each time: the cache holds at most 10,000 entries. */
export const MAX_CACHED_SEALED_BYTES = 4096;

/**
 * The reads by id of GET /tokens/{id} and of detokenization, kept in memory as stored: sealed (the cache never holds
 * a token's plaintext; it is opened per read, as from the database), with the strong invalidation of application
 * keys and proxies: every committed update or delete of any token bumps one shared version (in Redis when replicas
 * share one), and an entry is served only while that version, read before the entry was loaded, is unchanged. A
 * token's expiry is in the entry and checked on every read. Unknown ids are never cached; lists, deduplication
 * lookups and writes go to the database.
 */
export class CachedTokenRepository extends TokenRepository {
  private readonly byId: VersionedCache<Token>;

  constructor(
    private readonly inner: TokenRepository,
    versions: VersionStore,
  ) {
    super();
    this.byId = new VersionedCache(versions, TOKEN_VERSION, TOKEN_MAX_AGE_MS, freezeToken, (token) => token.sealed.length <= MAX_CACHED_SEALED_BYTES);
  }

  get keyCacheCounts(): Readonly<{ hits: number; misses: number }> {
    return this.byId.counts;
  }

  findById(tenantId: string, id: string): Promise<Token | null> {
    return this.byId.get(`${tenantId}\u0000${id}`, () => this.inner.findById(tenantId, id));
  }

  async findByIds(tenantId: string, ids: string[]): Promise<Token[]> {
    // Each miss is its own lookup; the inner repository sends lookups made together as one statement.
    const found = await Promise.all([...new Set(ids)].map((id) => this.findById(tenantId, id)));
    return found.filter((token): token is Token => token !== null);
  }

  insert(token: Token): Promise<void> {
    return this.inner.insert(token);
  }
  update(token: Token): Promise<boolean> {
    return this.inner.update(token);
  }
  delete(tenantId: string, id: string): Promise<boolean> {
    return this.inner.delete(tenantId, id);
  }
  findByFingerprint(tenantId: string, type: TokenType, fingerprint: string, now: Date): Promise<Token | null> {
    return this.inner.findByFingerprint(tenantId, type, fingerprint, now);
  }
  lockFingerprint(tenantId: string, type: TokenType, fingerprint: string): Promise<void> {
    return this.inner.lockFingerprint(tenantId, type, fingerprint);
  }
  list(tenantId: string, filter: TokenFilter, visibility: TokenVisibility, page: TokenPageQuery, now: Date): Promise<Page<Token>> {
    return this.inner.list(tenantId, filter, visibility, page, now);
  }
  deleteExpired(now: Date, limit: number): Promise<ExpiredToken[]> {
    return this.inner.deleteExpired(now, limit);
  }
}

/** Shared by every request that hits the entry: frozen, so no caller can change what the next one sees. */
function freezeToken(token: Token): Token {
  return Object.freeze({
    ...token,
    sealed: Buffer.from(token.sealed),
    containers: Object.freeze([...token.containers]) as string[],
    metadata: Object.freeze({ ...token.metadata }),
    mask: token.mask,
  });
}
