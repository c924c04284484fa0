import { RuleTransform } from '../applications/application';
import { Principal } from '../applications/principal';
import { Actor, NewAuditEvent } from '../audit/audit-event';
import { AuditOperation } from '../logs/log';
import { Clock } from '../shared/clock';
import { FieldErrorCollector, ValidationError } from '../shared/domain-error';
import { newId } from '../shared/ids';
import { TransactionScope } from '../shared/unit-of-work';
import { VaultCrypto } from '../vault/vault-crypto';
import { ExpressionEngine, expressionError, ExpressionFailure, renderMask } from './expression-engine';
import {
  isTokenId,
  isTokenType,
  MAX_EXPRESSION_LENGTH,
  Token,
  tokenAad,
  TokenInput,
  TokenSecrets,
  TokenType,
  validateContainers,
  validateDataSize,
  validateExpiry,
  validateMask,
  validateMetadata,
} from './token';
import { TOKEN_TYPE_DEFINITIONS } from './token-types';

/**
 * A token as one caller may see it: `data` only when its rule reveals (the data) or masks (the mask's value, when the
 * token has a mask); `metadata` hidden when a deduplicated create returns a token the caller may not read.
 */
export class TokenView {
  constructor(
    readonly token: Token,
    /** Absent: the response has no `data` member. */
    readonly data: { value: unknown } | undefined,
    readonly showMetadata = true,
    /** Set on create responses: whether an existing token was returned (deduplicate_token). */
    readonly deduplicated?: boolean,
  ) {}
}

/** A token ready to be stored, with what it seals. */
export interface PreparedToken {
  token: Token;
  secrets: TokenSecrets;
}

const MESSAGES: Record<AuditOperation, string> = { create: 'created', read: 'read', update: 'updated', delete: 'deleted' };

/** The log's entity type of a token: the catalogue (CONTRACT.md section 8) names `card` and `bank`; others are `token`. */
export function tokenEntityType(type: TokenType): string {
  return type === 'card' || type === 'bank' ? type : 'token';
}

/** The log about one token: the operation and the token id, never data. */
export function tokenEvent(actor: Actor, token: Pick<Token, 'tenantId' | 'id' | 'type'>, operation: AuditOperation, what?: string): NewAuditEvent {
  return {
    tenantId: token.tenantId,
    actor,
    entityType: tokenEntityType(token.type),
    entityId: token.id,
    operation,
    message: what ?? `Token ${token.id} ${MESSAGES[operation]}`,
  };
}

/** Records tokenEvent in the transaction. */
export function recordTokenEvent(
  tx: TransactionScope,
  actor: Actor,
  token: Pick<Token, 'tenantId' | 'id' | 'type'>,
  operation: AuditOperation,
  what?: string,
): void {
  tx.record(tokenEvent(actor, token, operation, what));
}

/**
 * What every token use case shares: sealing and opening (through VaultCrypto, so plaintext exists only in memory),
 * preparing a new or changed token (validation, the type's defaults, alias ids, fingerprint, mask), and presenting a
 * token under a rule's transform.
 */
export class TokenVault {
  constructor(
    readonly crypto: VaultCrypto,
    readonly expressions: ExpressionEngine,
    readonly clock: Clock,
  ) {}

  async seal(tenantId: string, id: string, secrets: TokenSecrets): Promise<Buffer> {
    return this.crypto.seal(tenantId, Buffer.from(JSON.stringify({ data: secrets.data, mask: secrets.mask ?? null })), tokenAad(tenantId, id));
  }

  async open(token: Token): Promise<TokenSecrets> {
    const opened = JSON.parse((await this.crypto.open(token.tenantId, token.sealed, tokenAad(token.tenantId, token.id))).toString('utf8')) as TokenSecrets;
    return { data: opened.data, mask: opened.mask ?? null };
  }

  /**
   * The token a create asks for, validated (every problem at once, `prefix` before each field) and sealed; its
   * expressions render on `expressions` (one request's budget: ExpressionEngine.shared).
   */
  async prepare(principal: Principal, input: TokenInput, prefix = '', expressions = this.expressions.shared()): Promise<PreparedToken> {
    const errors = new FieldErrorCollector();
    if (!isTokenType(input.type)) {
      errors.add(`${prefix}type`, 'must be one of the token types');
      errors.throwIfAny();
    }
    const definition = TOKEN_TYPE_DEFINITIONS[input.type];
    validateDataSize(input.data, `${prefix}data`, errors);
    if (input.data != null) definition.validate(input.data, `${prefix}data`, errors);
    const containers = input.containers ?? [definition.defaultContainer];
    validateContainers(containers, `${prefix}containers`, errors);
    const metadata = input.metadata ?? {};
    validateMetadata(metadata, `${prefix}metadata`, errors);
    const mask = input.mask === undefined ? definition.defaultMask : input.mask;
    validateMask(mask, `${prefix}mask`, errors);
    const fingerprintExpression = input.fingerprintExpression === undefined ? definition.defaultFingerprintExpression : input.fingerprintExpression;
    if (fingerprintExpression !== null && (typeof fingerprintExpression !== 'string' || fingerprintExpression.length > MAX_EXPRESSION_LENGTH)) {
      errors.add(`${prefix}fingerprint_expression`, `must be a string of at most ${MAX_EXPRESSION_LENGTH} characters`);
    }
    const now = this.clock.now();
    validateExpiry(input.expiresAt, now, errors);
    if (input.id !== undefined && (typeof input.id !== 'string' || input.id.length > MAX_EXPRESSION_LENGTH)) {
      errors.add(`${prefix}id`, 'must be a string');
    }
    errors.throwIfAny();

    const scope = { data: input.data };
    const id = await this.resolveId(expressions, input.id, scope, `${prefix}id`);
    const tenantId = principal.tenantId;
    const secrets: TokenSecrets = { data: input.data, mask: mask === null ? null : await renderMask(expressions, mask, scope, `${prefix}mask`) };
    const fingerprint =
      fingerprintExpression === null ? null : await this.fingerprint(expressions, tenantId, fingerprintExpression, scope, `${prefix}fingerprint_expression`);
    const token: Token = {
      tenantId,
      id,
      type: input.type,
      sealed: await this.seal(tenantId, id, secrets),
      mask,
      containers: [...new Set(containers)],
      metadata: { ...metadata },
      fingerprint,
      fingerprintExpression,
      expiresAt: input.expiresAt ?? null,
      createdBy: principal.applicationId,
      createdAt: now,
      modifiedBy: null,
      modifiedAt: null,
    };
    return { token, secrets };
  }

  /** Re-renders what depends on the data (mask value, fingerprint) and seals again, for an update. */
  async reseal(token: Token, data: unknown): Promise<PreparedToken> {
    const scope = { data };
    const expressions = this.expressions.shared();
    const secrets: TokenSecrets = { data, mask: token.mask === null ? null : await renderMask(expressions, token.mask, scope, 'mask') };
    const fingerprint =
      token.fingerprintExpression === null
        ? null
        : await this.fingerprint(expressions, token.tenantId, token.fingerprintExpression, scope, 'fingerprint_expression');
    return { token: { ...token, fingerprint, sealed: await this.seal(token.tenantId, token.id, secrets) }, secrets };
  }

  /** The caller's id, a generated UUID, or the value of an alias expression (`{{ data | alias_preserve_format }}`). */
  private async resolveId(expressions: ExpressionEngine, requested: string | undefined, scope: Record<string, unknown>, field: string): Promise<string> {
    if (requested === undefined) return newId();
    let id = requested;
    if (requested.includes('{{')) {
      try {
        id = await expressions.render(requested, scope);
      } catch (error) {
        if (error instanceof ExpressionFailure) throw expressionError(field, error);
        throw error;
      }
    }
    // Never echoes the id: an alias expression's value derives from the data.
    if (!isTokenId(id)) throw ValidationError.single(field, 'must be 1 to 400 characters of A-Z, a-z, 0-9, _ and -');
    return id;
  }

  private async fingerprint(
    expressions: ExpressionEngine,
    tenantId: string,
    expression: string,
    scope: Record<string, unknown>,
    field: string,
  ): Promise<string | null> {
    let canonical: string;
    try {
      canonical = await expressions.render(expression, scope);
    } catch (error) {
      if (error instanceof ExpressionFailure) throw expressionError(field, error);
      throw error;
    }
    return canonical.length === 0 ? null : this.crypto.fingerprint(tenantId, canonical);
  }

  /** The token as a rule's transform lets the caller see it; `secrets` is needed for reveal and mask only. */
  view(token: Token, transform: RuleTransform | null, secrets: TokenSecrets | undefined, options: { deduplicated?: boolean } = {}): TokenView {
    const showMetadata = transform !== null;
    let data: { value: unknown } | undefined;
    if (transform === 'reveal' && secrets) data = { value: secrets.data };
    else if (transform === 'mask' && secrets && token.mask !== null) data = { value: secrets.mask };
    return new TokenView(token, data, showMetadata, options.deduplicated);
  }

  /** Opens the token only when the transform shows something of its data. */
  async present(token: Token, transform: RuleTransform | null, options: { deduplicated?: boolean } = {}): Promise<TokenView> {
    const needsSecrets = transform === 'reveal' || (transform === 'mask' && token.mask !== null);
    return this.view(token, transform, needsSecrets ? await this.open(token) : undefined, options);
  }
}
