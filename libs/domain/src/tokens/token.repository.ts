import { Page } from '../shared/page';
import { TokenVisibility } from './token-access';
import { Token, TokenType } from './token';

export interface TokenFilter {
  /** Tokens with a container starting with this. */
  container?: string;
  types?: TokenType[];
  fingerprint?: string;
  /** Every pair must be in the token's metadata. */
  metadata?: Record<string, string>;
}

/** Keyset paging only (`start`, `size`), newest first. */
export interface TokenPageQuery {
  size: number;
  start?: string;
}

export interface ExpiredToken {
  tenantId: string;
  id: string;
  type: TokenType;
}

export abstract class TokenRepository {
  /** A ConflictError when the tenant already has a token with the id. */
  abstract insert(token: Token): Promise<void>;
  /** Replaces the mutable fields; false when the row is gone. */
  abstract update(token: Token): Promise<boolean>;
  abstract delete(tenantId: string, id: string): Promise<boolean>;
  abstract findById(tenantId: string, id: string): Promise<Token | null>;
  abstract findByIds(tenantId: string, ids: string[]): Promise<Token[]>;
  /** The oldest unexpired token of the type with the fingerprint (deduplication). */
  abstract findByFingerprint(tenantId: string, type: TokenType, fingerprint: string, now: Date): Promise<Token | null>;
  /** Serializes creates of the same fingerprint until the transaction ends, so that deduplication cannot race. */
  abstract lockFingerprint(tenantId: string, type: TokenType, fingerprint: string): Promise<void>;
  /** Unexpired tokens that match the filter and are visible under one of `visibility`'s scopes. */
  abstract list(tenantId: string, filter: TokenFilter, visibility: TokenVisibility, page: TokenPageQuery, now: Date): Promise<Page<Token>>;
  /** Deletes up to `limit` tokens past their expiry (any tenant), returning what it deleted. */
  abstract deleteExpired(now: Date, limit: number): Promise<ExpiredToken[]>;
}
