import { actorOf } from '../audit/actor';
import { Principal } from '../applications/principal';
import { SYSTEM_ACTOR } from '../audit/audit-event';
import { Clock } from '../shared/clock';
import { ConflictError, FieldErrorCollector, NotFoundError } from '../shared/domain-error';
import { TransactionScope, UnitOfWork } from '../shared/unit-of-work';
import {
  isExpired,
  mergePatch,
  Token,
  TokenInput,
  TokenPatch,
  TokenSecrets,
  validateContainers,
  validateDataSize,
  validateExpiry,
  validateMask,
  validateMetadata,
} from './token';
import { decideAccess, requireAccess, requireTokenPermission } from './token-access';
import { TOKEN_TYPE_DEFINITIONS } from './token-types';
import { PreparedToken, recordTokenEvent, tokenEvent, TokenVault, TokenView } from './token-vault';
import { TokenRepository } from './token.repository';

/**
 * Stores a prepared token under the caller's token:create rule for its containers (403 without one), or, with
 * `deduplicate`, returns the existing token of the same type and fingerprint, shown as the caller may read it (no
 * data and no metadata when it may not).
 */
export async function storeToken(
  tx: TransactionScope,
  vault: TokenVault,
  principal: Principal,
  prepared: PreparedToken,
  deduplicate: boolean,
): Promise<TokenView> {
  const { token } = prepared;
  const transform = requireAccess(principal, 'token:create', token);
  const repo = tx.get(TokenRepository);
  if (deduplicate && token.fingerprint !== null) {
    await repo.lockFingerprint(token.tenantId, token.type, token.fingerprint);
    const existing = await repo.findByFingerprint(token.tenantId, token.type, token.fingerprint, vault.clock.now());
    if (existing) {
      recordTokenEvent(tx, actorOf(principal), existing, 'read', `Token ${existing.id} returned by a deduplicated create`);
      return vault.present(existing, decideAccess(principal, 'token:read', existing), { deduplicated: true });
    }
  }
  await asDuplicateId(repo.insert(token));
  recordTokenEvent(tx, actorOf(principal), token, 'create');
  return vault.view(token, transform, prepared.secrets, { deduplicated: false });
}

/** A token id taken already: a 409 that says so. */
async function asDuplicateId(insert: Promise<void>): Promise<void> {
  try {
    await insert;
  } catch (error) {
    if (error instanceof ConflictError) throw new ConflictError('A token with this id already exists');
    throw error;
  }
}

/** POST /tokens. */
export class CreateToken {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly vault: TokenVault,
  ) {}

  async execute(principal: Principal, input: TokenInput): Promise<TokenView> {
    requireTokenPermission(principal, 'token:create');
    const prepared = await this.vault.prepare(principal, input);
    const { token } = prepared;
    if (input.deduplicateToken === true && token.fingerprint !== null) return this.uow.run((tx) => storeToken(tx, this.vault, principal, prepared, true));
    // Nothing to look up first: the row and its audit event in one step, grouped with concurrent creates.
    const transform = requireAccess(principal, 'token:create', token);
    await asDuplicateId(this.uow.insert(TokenRepository, token, [tokenEvent(actorOf(principal), token, 'create')]));
    return this.vault.view(token, transform, prepared.secrets, { deduplicated: false });
  }
}

/** Loads a token of the caller's tenant that has not expired: another tenant's, or an expired one, is a 404. */
export async function findLiveToken(tx: TransactionScope, vault: TokenVault, principal: Principal, id: string): Promise<Token> {
  const token = await tx.get(TokenRepository).findById(principal.tenantId, id);
  if (!token || isExpired(token, vault.clock.now())) throw new NotFoundError('Token');
  return token;
}

/**
 * PATCH /tokens/{id} (merge patch): needs token:update on the token's containers, and on the new ones when it moves
 * the token. A change of data re-renders the mask and the fingerprint and seals again; the response shows the token
 * under the rule that allowed the update.
 */
export class UpdateToken {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly vault: TokenVault,
  ) {}

  async execute(principal: Principal, id: string, patch: TokenPatch): Promise<TokenView> {
    requireTokenPermission(principal, 'token:update');
    const errors = new FieldErrorCollector();
    if (patch.containers !== undefined) validateContainers(patch.containers, 'containers', errors);
    if (patch.metadata != null) validateMetadata(patch.metadata, 'metadata', errors, true);
    if (patch.mask !== undefined) validateMask(patch.mask, 'mask', errors);
    validateExpiry(patch.expiresAt, this.vault.clock.now(), errors);
    if (patch.data === null) errors.add('data', 'may not be removed');
    errors.throwIfAny();
    return this.uow.run(async (tx) => {
      const current = await findLiveToken(tx, this.vault, principal, id);
      const transform = requireAccess(principal, 'token:update', current);
      let next: Token = { ...current, modifiedBy: principal.applicationId, modifiedAt: this.vault.clock.now() };
      if (patch.containers !== undefined) {
        next.containers = [...new Set(patch.containers)];
        requireAccess(principal, 'token:update', next);
      }
      if (patch.metadata !== undefined) next.metadata = patch.metadata === null ? {} : (mergePatch(current.metadata, patch.metadata) as Record<string, string>);
      if (patch.mask !== undefined) next.mask = patch.mask;
      if (patch.expiresAt !== undefined) next.expiresAt = patch.expiresAt;
      const after = new FieldErrorCollector();
      validateMetadata(next.metadata, 'metadata', after);
      let secrets: TokenSecrets | undefined;
      if (patch.data !== undefined || patch.mask !== undefined) {
        const opened = await this.vault.open(current);
        const data = patch.data === undefined ? opened.data : mergePatch(opened.data, patch.data);
        validateDataSize(data, 'data', after);
        TOKEN_TYPE_DEFINITIONS[current.type].validate(data, 'data', after);
        after.throwIfAny();
        ({ token: next, secrets } = await this.vault.reseal(next, data));
      }
      after.throwIfAny();
      if (!(await tx.get(TokenRepository).update(next))) throw new NotFoundError('Token');
      recordTokenEvent(tx, actorOf(principal), next, 'update');
      return secrets ? this.vault.view(next, transform, secrets) : this.vault.present(next, transform);
    });
  }
}

/** DELETE /tokens/{id}: token:delete on the token's containers. */
export class DeleteToken {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly vault: TokenVault,
  ) {}

  async execute(principal: Principal, id: string): Promise<void> {
    requireTokenPermission(principal, 'token:delete');
    await this.uow.run(async (tx) => {
      const token = await findLiveToken(tx, this.vault, principal, id);
      requireAccess(principal, 'token:delete', token);
      if (!(await tx.get(TokenRepository).delete(principal.tenantId, id))) throw new NotFoundError('Token');
      recordTokenEvent(tx, actorOf(principal), token, 'delete');
    });
  }
}

/**
 * The worker's sweep: tokens past `expires_at` are deleted in batches of `batchSize` (one transaction each, at most
 * `maxBatches` per run), each logged as a delete by the system. Safe to run from several workers at once.
 */
export class ExpireTokens {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly clock: Clock,
  ) {}

  async sweep(batchSize = 500, maxBatches = 20): Promise<number> {
    let deleted = 0;
    for (let batch = 0; batch < maxBatches; batch++) {
      const n = await this.uow.run(async (tx) => {
        const expired = await tx.get(TokenRepository).deleteExpired(this.clock.now(), batchSize);
        for (const token of expired) recordTokenEvent(tx, SYSTEM_ACTOR, token, 'delete', `Token ${token.id} expired and was deleted`);
        return expired.length;
      });
      deleted += n;
      if (n < batchSize) break;
    }
    return deleted;
  }
}
