import { ConflictError } from '../shared/domain-error';
import { Page } from '../shared/page';
import { isExpired, Token, TokenType } from '../tokens/token';
import { conditionHolds, TokenVisibility } from '../tokens/token-access';
import { decodeTokenCursor, tokenPageFromRows } from '../tokens/token-page';
import { ExpiredToken, TokenFilter, TokenPageQuery, TokenRepository } from '../tokens/token.repository';
import { Snapshotting } from './in-memory-ports';

function copy(token: Token): Token {
  return { ...token, sealed: Buffer.from(token.sealed), containers: [...token.containers], metadata: { ...token.metadata } };
}

/** The TokenRepository of unit tests: tenant-scoped ids, newest-first keyset paging, the visibility scopes. */
export class InMemoryTokenRepository extends TokenRepository implements Snapshotting {
  rows = new Map<string, Token>();

  snapshot(): unknown {
    return new Map(this.rows);
  }

  restore(state: unknown): void {
    this.rows = state as Map<string, Token>;
  }

  all(): Token[] {
    return [...this.rows.values()].map(copy);
  }

  async insert(token: Token): Promise<void> {
    const key = `${token.tenantId}/${token.id}`;
    if (this.rows.has(key)) throw new ConflictError('The resource conflicts with an existing one');
    this.rows.set(key, copy(token));
  }

  async update(token: Token): Promise<boolean> {
    const key = `${token.tenantId}/${token.id}`;
    if (!this.rows.has(key)) return false;
    this.rows.set(key, copy(token));
    return true;
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    return this.rows.delete(`${tenantId}/${id}`);
  }

  async findById(tenantId: string, id: string): Promise<Token | null> {
    const row = this.rows.get(`${tenantId}/${id}`);
    return row ? copy(row) : null;
  }

  async findByIds(tenantId: string, ids: string[]): Promise<Token[]> {
    return [...new Set(ids)]
      .map((id) => this.rows.get(`${tenantId}/${id}`))
      .filter((t) => t !== undefined)
      .map(copy);
  }

  async findByFingerprint(tenantId: string, type: TokenType, fingerprint: string, now: Date): Promise<Token | null> {
    const found = this.all()
      .filter((t) => t.tenantId === tenantId && t.type === type && t.fingerprint === fingerprint && !isExpired(t, now))
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    return found[0] ?? null;
  }

  async lockFingerprint(): Promise<void> {}

  async list(tenantId: string, filter: TokenFilter, visibility: TokenVisibility, page: TokenPageQuery, now: Date): Promise<Page<Token>> {
    const visible = (t: Token) =>
      visibility.some((scope) =>
        'container' in scope ? t.containers.some((c) => c.startsWith(scope.container)) : scope.conditions.every((c) => conditionHolds(c, t)),
      );
    let rows = this.all()
      .filter((t) => t.tenantId === tenantId && !isExpired(t, now) && visible(t))
      .filter((t) => filter.container === undefined || t.containers.some((c) => c.startsWith(filter.container!)))
      .filter((t) => !filter.types?.length || filter.types.includes(t.type))
      .filter((t) => filter.fingerprint === undefined || t.fingerprint === filter.fingerprint)
      .filter((t) => Object.entries(filter.metadata ?? {}).every(([k, v]) => t.metadata[k] === v))
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    if (page.start !== undefined) {
      const cursor = decodeTokenCursor(page.start);
      rows = rows.filter(
        (t) => t.createdAt.getTime() < cursor.createdAt.getTime() || (t.createdAt.getTime() === cursor.createdAt.getTime() && t.id < cursor.id),
      );
    }
    return tokenPageFromRows(rows.slice(0, page.size + 1), page);
  }

  async deleteExpired(now: Date, limit: number): Promise<ExpiredToken[]> {
    const due = this.all()
      .filter((t) => isExpired(t, now))
      .sort((a, b) => a.expiresAt!.getTime() - b.expiresAt!.getTime())
      .slice(0, limit);
    for (const t of due) this.rows.delete(`${t.tenantId}/${t.id}`);
    return due.map((t) => ({ tenantId: t.tenantId, id: t.id, type: t.type }));
  }
}
