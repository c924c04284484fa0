import { EntityManager } from 'typeorm';
import {
  ConflictError,
  decodeTokenCursor,
  ExpiredToken,
  Page,
  Token,
  TokenFilter,
  TokenPageQuery,
  tokenPageFromRows,
  TokenRepository,
  TokenType,
  TokenVisibility,
} from '@gatehouse/domain';
import { translateDatabaseError } from '../database-errors';
import { BatchInsert } from '../grouped-insert';
import { TokenEntity } from '../entities/token.entity';
import { GroupBatch } from '../group-batch';

/** Every segment prefix of every container: `/pci/high/` gives `/`, `/pci/`, `/pci/high/`. */
export function containerPrefixes(containers: readonly string[]): string[] {
  const prefixes = new Set<string>();
  for (const container of containers) {
    let at = container.indexOf('/');
    while (at >= 0) {
      prefixes.add(container.slice(0, at + 1));
      at = container.indexOf('/', at + 1);
    }
  }
  return [...prefixes];
}

/** A LIKE pattern matching what starts with `prefix` (its `%`, `_` and `\` literal). */
function startsWith(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** SQL text and parameters, built up clause by clause. */
class Conditions {
  readonly clauses: string[] = [];
  readonly params: unknown[] = [];

  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  /** A container-prefix test: the GIN-indexed prefix array when it ends on a segment, else a scan of the containers. */
  containerPrefix(prefix: string): string {
    if (prefix.endsWith('/')) return `t.container_prefixes @> ARRAY[${this.param(prefix)}]::text[]`;
    return `EXISTS (SELECT 1 FROM unnest(t.containers) c WHERE c LIKE ${this.param(startsWith(prefix))} ESCAPE '\\')`;
  }
}

/** The visibility of a list (TokenVisibility) as one SQL condition: any rule's container prefix, or all of a rule's conditions. */
function visibilityClause(sql: Conditions, visibility: TokenVisibility): string {
  const containers = visibility.filter((scope): scope is { container: string } => 'container' in scope).map((s) => s.container);
  const alternatives: string[] = [];
  if (containers.length > 0) alternatives.push(`t.container_prefixes && ${sql.param(containers)}::text[]`);
  for (const scope of visibility) {
    if (!('conditions' in scope)) continue;
    const all = scope.conditions.map((condition) => {
      const value = condition.operator === 'equals' ? sql.param(condition.value) : sql.param(startsWith(condition.value));
      const op = condition.operator === 'equals' ? '=' : 'LIKE';
      const escape = condition.operator === 'equals' ? '' : ` ESCAPE '\\'`;
      return condition.attribute === 'id' ? `t.id ${op} ${value}${escape}` : `EXISTS (SELECT 1 FROM unnest(t.containers) c WHERE c ${op} ${value}${escape})`;
    });
    alternatives.push(`(${all.join(' AND ')})`);
  }
  return alternatives.length === 0 ? 'false' : `(${alternatives.join(' OR ')})`;
}

const COLUMNS = `t.tenant_id, t.id, t.type, t.sealed, t.mask, t.containers, t.metadata, t.fingerprint, t.fingerprint_expression,
  t.expires_at, t.created_by, t.created_at, t.modified_by, t.modified_at`;

/**
 * Tokens inserted many at once (UnitOfWork.insert), or one (TypeormTokenRepository.insert): one parameter per column,
 * each an array; the containers, arrays themselves, travel as JSON (a PostgreSQL array parameter cannot hold arrays of
 * different lengths).
 */
export const TOKEN_BATCH_INSERT: BatchInsert<Token> = {
  sql: `INSERT INTO tokens (tenant_id, id, type, sealed, mask, containers, container_prefixes, metadata, fingerprint,
    fingerprint_expression, expires_at, created_by, created_at, modified_by, modified_at)
    SELECT r.tenant_id, r.id, r.type, r.sealed, r.mask::json, ARRAY(SELECT jsonb_array_elements_text(r.containers)),
      ARRAY(SELECT jsonb_array_elements_text(r.prefixes)), r.metadata::jsonb, r.fingerprint, r.fingerprint_expression, r.expires_at,
      r.created_by, r.created_at, r.modified_by, r.modified_at
    FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bytea[], $5::text[], $6::jsonb[], $7::jsonb[], $8::text[], $9::text[],
      $10::text[], $11::timestamptz[], $12::uuid[], $13::timestamptz[], $14::uuid[], $15::timestamptz[])
      AS r(tenant_id, id, type, sealed, mask, containers, prefixes, metadata, fingerprint, fingerprint_expression, expires_at,
        created_by, created_at, modified_by, modified_at)
    ON CONFLICT DO NOTHING
    RETURNING tenant_id::text || '/' || id AS key`,
  parameters: (tokens) => [
    tokens.map((t) => t.tenantId),
    tokens.map((t) => t.id),
    tokens.map((t) => t.type),
    tokens.map((t) => t.sealed),
    tokens.map((t) => (t.mask === null ? null : JSON.stringify(t.mask))),
    tokens.map((t) => JSON.stringify(t.containers)),
    tokens.map((t) => JSON.stringify(containerPrefixes(t.containers))),
    tokens.map((t) => JSON.stringify(t.metadata)),
    tokens.map((t) => t.fingerprint),
    tokens.map((t) => t.fingerprintExpression),
    tokens.map((t) => t.expiresAt),
    tokens.map((t) => t.createdBy),
    tokens.map((t) => t.createdAt),
    tokens.map((t) => t.modifiedBy),
    tokens.map((t) => t.modifiedAt),
  ],
  key: (token) => `${token.tenantId.toLowerCase()}/${token.id}`,
};

interface RawTokenRow {
  tenant_id: string;
  id: string;
  type: TokenType;
  sealed: Buffer;
  mask: Token['mask'];
  containers: string[];
  metadata: Record<string, string>;
  fingerprint: string | null;
  fingerprint_expression: string | null;
  expires_at: Date | null;
  created_by: string | null;
  created_at: Date;
  modified_by: string | null;
  modified_at: Date | null;
}

function fromRaw(raw: RawTokenRow): Token {
  return {
    tenantId: raw.tenant_id,
    id: raw.id,
    type: raw.type,
    sealed: raw.sealed,
    mask: raw.mask,
    containers: raw.containers,
    metadata: raw.metadata,
    fingerprint: raw.fingerprint,
    fingerprintExpression: raw.fingerprint_expression,
    expiresAt: raw.expires_at,
    createdBy: raw.created_by,
    createdAt: raw.created_at,
    modifiedBy: raw.modified_by,
    modifiedAt: raw.modified_at,
  };
}

function toRow(token: Token): TokenEntity {
  return Object.assign(new TokenEntity(), { ...token, containerPrefixes: containerPrefixes(token.containers) });
}

interface TokenLookup {
  tenantId: string;
  ids: string[];
}

/**
 * The vault's tokens in PostgreSQL; reads by plain SQL on the indexes (every token request runs one). Outside a
 * transaction, the reads by id of concurrent requests go as one SELECT (GroupBatch): each request still gets only
 * its own tenant's tokens, matched on the primary key (tenant, id).
 */
export class TypeormTokenRepository extends TokenRepository {
  private readonly lookups: GroupBatch<TokenLookup, Token[]> | null;

  constructor(private readonly em: EntityManager) {
    super();
    // A transaction's reads stay in it (they must see its writes and take part in its isolation).
    this.lookups = em.queryRunner ? null : new GroupBatch((batch) => this.lookUp(batch), 200);
  }

  async insert(token: Token): Promise<void> {
    try {
      // Plain SQL, the batch statement with one row: every create runs it, and TypeORM's builder costs more than it.
      const inserted: unknown[] = await this.em.query(TOKEN_BATCH_INSERT.sql, TOKEN_BATCH_INSERT.parameters([token]));
      // The statement skips a row whose key exists: a duplicate id, which tokens' one unique key (tenant, id) makes.
      if (inserted.length === 0) throw new ConflictError('The resource conflicts with an existing one');
    } catch (error) {
      // Translated here too (not only by the unit of work's registry): any caller gets a domain error.
      throw translateDatabaseError(error);
    }
  }

  async update(token: Token): Promise<boolean> {
    const { tenantId, id, ...fields } = toRow(token);
    const result = await this.em.getRepository(TokenEntity).update({ tenantId, id }, fields);
    return (result.affected ?? 0) > 0;
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const result = await this.em.getRepository(TokenEntity).delete({ tenantId, id });
    return (result.affected ?? 0) > 0;
  }

  async findById(tenantId: string, id: string): Promise<Token | null> {
    return (await this.findByIds(tenantId, [id]))[0] ?? null;
  }

  async findByIds(tenantId: string, requested: string[]): Promise<Token[]> {
    // No stored id holds a NUL (PostgreSQL text cannot), and one would fail the whole batched statement.
    const ids = requested.filter((id) => !id.includes('\u0000'));
    if (ids.length === 0) return [];
    if (this.lookups) return this.lookups.add({ tenantId, ids });
    return (await this.lookUp([{ tenantId, ids }]))[0]!;
  }

  /** Many lookups as one SELECT of (tenant, id) pairs; each lookup answered with its own tenant's rows. */
  private async lookUp(lookups: TokenLookup[]): Promise<Token[][]> {
    const tenants: string[] = [];
    const ids: string[] = [];
    for (const lookup of lookups) {
      for (const id of lookup.ids) {
        tenants.push(lookup.tenantId);
        ids.push(id);
      }
    }
    const rows: RawTokenRow[] = await this.em.query(
      `SELECT ${COLUMNS} FROM tokens t JOIN unnest($1::uuid[], $2::varchar[]) AS k(tenant_id, id) ON t.tenant_id = k.tenant_id AND t.id = k.id`,
      [tenants, ids],
    );
    const found = new Map<string, Token>();
    for (const row of rows) {
      const token = fromRaw(row);
      found.set(`${token.tenantId}\u0000${token.id}`, token);
    }
    return lookups.map((lookup) => [...new Set(lookup.ids)].flatMap((id) => found.get(`${lookup.tenantId}\u0000${id}`) ?? []));
  }

  async findByFingerprint(tenantId: string, type: TokenType, fingerprint: string, now: Date): Promise<Token | null> {
    const rows: RawTokenRow[] = await this.em.query(
      `SELECT ${COLUMNS} FROM tokens t WHERE t.tenant_id = $1 AND t.fingerprint = $2 AND t.type = $3
         AND (t.expires_at IS NULL OR t.expires_at > $4) ORDER BY t.created_at, t.id LIMIT 1`,
      [tenantId, fingerprint, type, now],
    );
    return rows[0] ? fromRaw(rows[0]) : null;
  }

  async lockFingerprint(tenantId: string, type: TokenType, fingerprint: string): Promise<void> {
    await this.em.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`token-fingerprint:${tenantId}:${type}:${fingerprint}`]);
  }

  async list(tenantId: string, filter: TokenFilter, visibility: TokenVisibility, page: TokenPageQuery, now: Date): Promise<Page<Token>> {
    const sql = new Conditions();
    sql.clauses.push(`t.tenant_id = ${sql.param(tenantId)}`, `(t.expires_at IS NULL OR t.expires_at > ${sql.param(now)})`);
    sql.clauses.push(visibilityClause(sql, visibility));
    if (filter.container !== undefined) sql.clauses.push(sql.containerPrefix(filter.container));
    if (filter.types?.length) sql.clauses.push(`t.type = ANY(${sql.param(filter.types)}::varchar[])`);
    if (filter.fingerprint !== undefined) sql.clauses.push(`t.fingerprint = ${sql.param(filter.fingerprint)}`);
    if (filter.metadata && Object.keys(filter.metadata).length > 0) sql.clauses.push(`t.metadata @> ${sql.param(JSON.stringify(filter.metadata))}::jsonb`);
    if (page.start !== undefined) {
      const cursor = decodeTokenCursor(page.start);
      sql.clauses.push(`(t.created_at, t.id) < (${sql.param(cursor.createdAt)}, ${sql.param(cursor.id)})`);
    }
    const rows: RawTokenRow[] = await this.em.query(
      `SELECT ${COLUMNS} FROM tokens t WHERE ${sql.clauses.join(' AND ')} ORDER BY t.created_at DESC, t.id DESC LIMIT ${sql.param(page.size + 1)}`,
      sql.params,
    );
    return tokenPageFromRows(rows.map(fromRaw), page);
  }

  async deleteExpired(now: Date, limit: number): Promise<ExpiredToken[]> {
    // SKIP LOCKED: several workers sweeping at once take different rows.
    // TypeORM answers a DELETE ... RETURNING as [rows, affected count].
    const [rows]: [{ tenant_id: string; id: string; type: TokenType }[], number] = await this.em.query(
      `DELETE FROM tokens WHERE (tenant_id, id) IN (
         SELECT tenant_id, id FROM tokens WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING tenant_id, id, type`,
      [now, limit],
    );
    return rows.map((r) => ({ tenantId: r.tenant_id, id: r.id, type: r.type }));
  }
}
