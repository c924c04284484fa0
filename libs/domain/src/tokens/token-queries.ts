import { actorOf } from '../applications/application-commands';
import { Principal } from '../applications/principal';
import { FieldErrorCollector } from '../shared/domain-error';
import { Page } from '../shared/page';
import { UnitOfWork } from '../shared/unit-of-work';
import { MAX_CONTAINER_LENGTH, MAX_METADATA_ENTRIES, MAX_METADATA_VALUE_LENGTH } from './token';
import { decideAccess, requireAccess, requireTokenPermission, visibilityOf } from './token-access';
import { findLiveToken } from './token-commands';
import { recordTokenEvent, TokenVault, TokenView } from './token-vault';
import { TokenFilter, TokenPageQuery, TokenRepository } from './token.repository';

/** GET /tokens/{id}: token:read on the token's containers decides what comes back; the read is logged. */
export class GetToken {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly vault: TokenVault,
  ) {}

  async execute(principal: Principal, id: string): Promise<TokenView> {
    requireTokenPermission(principal, 'token:read');
    const { token, transform } = await this.uow.run(async (tx) => {
      const found = await findLiveToken(tx, this.vault, principal, id);
      const decided = requireAccess(principal, 'token:read', found);
      recordTokenEvent(tx, actorOf(principal), found, 'read');
      return { token: found, transform: decided };
    });
    return this.vault.present(token, transform);
  }
}

/**
 * GET /v2/tokens: the tokens the caller's token:read rules reach (others are not listed), each shown under its rule,
 * newest first, keyset paged. One log per call.
 */
export class ListTokens {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly vault: TokenVault,
  ) {}

  async execute(principal: Principal, filter: TokenFilter, page: TokenPageQuery): Promise<Page<TokenView>> {
    requireTokenPermission(principal, 'token:read');
    validateFilter(filter);
    const visibility = visibilityOf(principal, 'token:read');
    const found = await this.uow.run(async (tx) => {
      const result = await tx.get(TokenRepository).list(principal.tenantId, filter, visibility, page, this.vault.clock.now());
      tx.record({
        tenantId: principal.tenantId,
        actor: actorOf(principal),
        entityType: 'token',
        entityId: principal.tenantId,
        operation: 'read',
        message: `Tokens listed (${result.items.length} returned)`,
      });
      return result;
    });
    const items = await Promise.all(found.items.map((token) => this.vault.present(token, decideAccess(principal, 'token:read', token))));
    return { ...found, items };
  }
}

function validateFilter(filter: TokenFilter): void {
  const errors = new FieldErrorCollector();
  if (filter.container !== undefined && (!filter.container.startsWith('/') || filter.container.length > MAX_CONTAINER_LENGTH)) {
    errors.add('container', `must start with '/' and be at most ${MAX_CONTAINER_LENGTH} characters`);
  }
  const metadata = Object.entries(filter.metadata ?? {});
  if (metadata.length > MAX_METADATA_ENTRIES) errors.add('metadata', `at most ${MAX_METADATA_ENTRIES} metadata filters`);
  for (const [key, value] of metadata) {
    if (value.length > MAX_METADATA_VALUE_LENGTH) errors.add(`metadata.${key.slice(0, 100)}`, `must be at most ${MAX_METADATA_VALUE_LENGTH} characters`);
  }
  errors.throwIfAny();
}
