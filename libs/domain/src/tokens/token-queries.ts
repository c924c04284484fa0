import { actorOf } from '../audit/actor';
import { Principal } from '../applications/principal';
import { FieldErrorCollector, NotFoundError } from '../shared/domain-error';
import { Page } from '../shared/page';
import { UnitOfWork } from '../shared/unit-of-work';
import { isExpired, MAX_CONTAINER_LENGTH, MAX_METADATA_ENTRIES, MAX_METADATA_VALUE_LENGTH } from './token';
import { decideAccess, requireAccess, requireTokenPermission, visibilityOf } from './token-access';
import { tokenEvent, TokenVault, TokenView } from './token-vault';
import { TokenFilter, TokenPageQuery, TokenRepository } from './token.repository';

/**
 * GET /tokens/{id}: token:read on the token's containers decides what comes back. The read is logged (committed)
 * before the token is answered; the token is read outside a transaction, as a read changes nothing.
 */
export class GetToken {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly vault: TokenVault,
    private readonly tokens: TokenRepository,
  ) {}

  async execute(principal: Principal, id: string): Promise<TokenView> {
    requireTokenPermission(principal, 'token:read');
    const token = await this.tokens.findById(principal.tenantId, id);
    if (!token || isExpired(token, this.vault.clock.now())) throw new NotFoundError('Token');
    const transform = requireAccess(principal, 'token:read', token);
    const view = await this.vault.present(token, transform);
    await this.uow.record([tokenEvent(actorOf(principal), token, 'read')]);
    return view;
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
    private readonly tokens: TokenRepository,
  ) {}

  async execute(principal: Principal, filter: TokenFilter, page: TokenPageQuery): Promise<Page<TokenView>> {
    requireTokenPermission(principal, 'token:read');
    validateFilter(filter);
    const visibility = visibilityOf(principal, 'token:read');
    const found = await this.tokens.list(principal.tenantId, filter, visibility, page, this.vault.clock.now());
    await this.uow.record([
      {
        tenantId: principal.tenantId,
        actor: actorOf(principal),
        entityType: 'token',
        entityId: principal.tenantId,
        operation: 'read',
        message: `Tokens listed (${found.items.length} returned)`,
      },
    ]);
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
