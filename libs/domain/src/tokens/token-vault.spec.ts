import { FixedClock, InMemoryTokenRepository, InMemoryUnitOfWork, InMemoryVaultCrypto } from '../testing';
import { AccessRule } from '../applications/application';
import { Principal } from '../applications/principal';
import { ApplicationType } from '../applications/permissions';
import { ExpressionEngine, ExpressionFailure } from './expression-engine';
import { isAbaRoutingNumber, isLuhnValid } from './token-types';
import { CreateToken, DeleteToken, ExpireTokens, UpdateToken } from './token-commands';
import { GetToken, ListTokens } from './token-queries';
import { Detokenize, Tokenize } from './tokenize';
import { TokenVault } from './token-vault';
import { TokenRepository } from './token.repository';
import { tokenAad } from './token';

/** Enough of the expression language for the use cases: `data`, `data.a.b`, `| reveal_last: n`, `| reveal: a, b`, `| stringify`, `| remove: 'c'`. */
class StubExpressionEngine extends ExpressionEngine {
  async evaluate(expression: string, scope: Readonly<Record<string, unknown>>): Promise<unknown> {
    const [path, ...filters] = expression.split('|').map((part) => part.trim());
    let value: unknown = path!.split('.').reduce<unknown>((v, key) => (v as Record<string, unknown> | undefined)?.[key], scope);
    for (const filter of filters) {
      const [name, arg] = filter.split(':').map((p) => p.trim());
      if (name === 'reveal_last') value = 'X'.repeat(Math.max(0, String(value).length - Number(arg))) + String(value).slice(-Number(arg));
      else if (name === 'reveal') {
        const [head, tail] = arg!.split(',').map(Number) as [number, number];
        const text = String(value);
        value = text.slice(0, head) + 'X'.repeat(text.length - head - tail) + text.slice(text.length - tail);
      } else if (name === 'stringify') value = JSON.stringify(value);
      else if (name === 'remove') value = String(value).split(arg!.replace(/'/g, '')).join('');
      else throw new ExpressionFailure(`undefined filter: ${name}`);
    }
    return value;
  }

  async render(template: string, scope: Readonly<Record<string, unknown>>): Promise<string> {
    let out = '';
    let rest = template;
    for (let m = /\{\{(.*?)\}\}/.exec(rest); m; m = /\{\{(.*?)\}\}/.exec(rest)) {
      const value = await this.evaluate(m[1]!, scope);
      out += rest.slice(0, m.index) + (typeof value === 'string' ? value : value == null ? '' : JSON.stringify(value));
      rest = rest.slice(m.index + m[0].length);
    }
    return out + rest;
  }
}

const TENANT = '11111111-1111-4111-8111-111111111111';
const OTHER_TENANT = '22222222-2222-4222-8222-222222222222';
const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '123' };
const ALL = ['token:create', 'token:read', 'token:update', 'token:delete', 'token:use'];

function principal(type: ApplicationType, permissions: string[], rules: AccessRule[] = [], tenantId = TENANT): Principal {
  return { applicationId: `app-${type}`, tenantId, type, permissions: new Set(permissions), rules, canCreateExpiringApplications: false };
}

function setup() {
  const clock = new FixedClock();
  const tokens = new InMemoryTokenRepository();
  const uow = new InMemoryUnitOfWork(clock).register(TokenRepository, tokens);
  const crypto = new InMemoryVaultCrypto();
  const vault = new TokenVault(crypto, new StubExpressionEngine(), clock);
  return {
    clock,
    tokens,
    uow,
    crypto,
    create: new CreateToken(uow, vault),
    get: new GetToken(uow, vault, tokens),
    list: new ListTokens(uow, vault, tokens),
    update: new UpdateToken(uow, vault),
    remove: new DeleteToken(uow, vault),
    tokenize: new Tokenize(uow, vault),
    detokenize: new Detokenize(uow, vault, tokens),
    expire: new ExpireTokens(uow, clock),
  };
}

const revealer = principal('private', [], [{ priority: 1, container: '/', transform: 'reveal', permissions: ALL }]);
const masker = principal('private', ALL);

describe('token vault use cases', () => {
  it('stores data only sealed, bound to the tenant and id, and answers as the rule decides', async () => {
    const s = setup();
    const view = await s.create.execute(masker, { type: 'card_number', data: '4242424242424242', metadata: { m: 'v' } });
    expect(view.data).toEqual({ value: 'XXXXXXXXXXXX4242' });
    const [stored] = s.tokens.all();
    expect(stored!.sealed.toString('latin1')).not.toContain('4242424242424242');
    expect(JSON.stringify({ ...stored, sealed: undefined })).not.toContain('4242424242424242');
    expect(stored!.fingerprint).toBe(await s.crypto.fingerprint(TENANT, '4242424242424242'));
    await expect(s.crypto.open(TENANT, stored!.sealed, tokenAad(TENANT, 'another-id'))).rejects.toThrow();
    expect((await s.get.execute(revealer, view.token.id)).data).toEqual({ value: '4242424242424242' });
    expect(s.uow.events.map((e) => [e.entityType, e.operation])).toEqual([
      ['token', 'create'],
      ['token', 'read'],
    ]);
    expect(JSON.stringify(s.uow.events)).not.toContain('4242424242424242');
  });

  it('another tenant gets a 404, a key without a matching rule a 403', async () => {
    const s = setup();
    const view = await s.create.execute(revealer, { type: 'card', data: CARD });
    await expect(s.get.execute(principal('private', ALL, [], OTHER_TENANT), view.token.id)).rejects.toMatchObject({ code: 'not_found' });
    const bankOnly = principal('private', [], [{ priority: 1, container: '/bank/', transform: 'reveal', permissions: ['token:read'] }]);
    await expect(s.get.execute(bankOnly, view.token.id)).rejects.toMatchObject({ code: 'forbidden' });
    await expect(s.get.execute(principal('public', ['token:create']), view.token.id)).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('refuses a create outside the containers the create rule covers', async () => {
    const s = setup();
    const pciOnly = principal('private', [], [{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:create'] }]);
    await expect(s.create.execute(pciOnly, { type: 'token', data: 'x' })).rejects.toMatchObject({ code: 'forbidden' });
    expect((await s.create.execute(pciOnly, { type: 'token', data: 'x', containers: ['/pci/low/'] })).data).toEqual({ value: 'x' });
    expect(s.tokens.all()).toHaveLength(1);
  });

  it('deduplicates by type and fingerprint, showing no data or metadata to a caller that may not read it', async () => {
    const s = setup();
    const first = await s.create.execute(revealer, { type: 'card', data: CARD, metadata: { a: '1' } });
    const again = await s.create.execute(revealer, { type: 'card', data: { ...CARD, cvc: '999' }, deduplicateToken: true });
    expect(again.token.id).toBe(first.token.id);
    expect(again.deduplicated).toBe(true);
    const writer = principal('public', ['token:create']);
    const hidden = await s.create.execute(writer, { type: 'card', data: CARD, deduplicateToken: true });
    expect(hidden).toMatchObject({ deduplicated: true, data: undefined, showMetadata: false });
    // Another type with the same fingerprint is not a duplicate.
    const other = await s.create.execute(revealer, { type: 'card_number', data: CARD.number, deduplicateToken: true });
    expect(other.deduplicated).toBe(false);
    expect(s.tokens.all()).toHaveLength(2);
  });

  it('updates by merge patch, re-rendering mask and fingerprint; needs token:update on the new containers too', async () => {
    const s = setup();
    const view = await s.create.execute(revealer, { type: 'social_security_number', data: '123-45-6789', metadata: { a: '1' } });
    const updated = await s.update.execute(revealer, view.token.id, { data: '987-65-4321', metadata: { a: null, b: '2' } });
    expect(updated.data).toEqual({ value: '987-65-4321' });
    expect(updated.token.metadata).toEqual({ b: '2' });
    expect(updated.token.fingerprint).toBe(await s.crypto.fingerprint(TENANT, '987654321'));
    const pciUpdater = principal('private', [], [{ priority: 1, container: '/pii/', transform: 'mask', permissions: ['token:update'] }]);
    await expect(s.update.execute(pciUpdater, view.token.id, { containers: ['/general/'] })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(s.update.execute(revealer, view.token.id, { data: '12' })).rejects.toMatchObject({
      code: 'validation',
      fieldErrors: { data: expect.any(Array) },
    });
  });

  it('lists only what the read rules reach, newest first, keyset paged, with one log per call', async () => {
    const s = setup();
    for (let i = 0; i < 3; i++) {
      s.clock.advance(1000);
      await s.create.execute(revealer, { id: `pci-${i}`, type: 'token', data: i, containers: ['/pci/'], metadata: { n: String(i) } });
      await s.create.execute(revealer, { id: `gen-${i}`, type: 'token', data: i });
    }
    const pciReader = principal('private', [], [{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:read'] }]);
    const before = s.uow.events.length;
    const first = await s.list.execute(pciReader, {}, { size: 2 });
    expect(first.items.map((v) => v.token.id)).toEqual(['pci-2', 'pci-1']);
    expect(s.uow.events.length - before).toBe(1);
    const second = await s.list.execute(pciReader, {}, { size: 2, start: first.next });
    expect(second.items.map((v) => v.token.id)).toEqual(['pci-0']);
    expect(second.next).toBeUndefined();
    expect((await s.list.execute(revealer, { metadata: { n: '1' } }, { size: 10 })).items.map((v) => v.token.id)).toEqual(['pci-1']);
    expect((await s.list.execute(revealer, { container: '/general/' }, { size: 10 })).items).toHaveLength(3);
  });

  it('expired tokens are unreadable at once and swept by the system in batches', async () => {
    const s = setup();
    const view = await s.create.execute(revealer, { type: 'token', data: 'soon', expiresAt: new Date(s.clock.now().getTime() + 1000) });
    await s.create.execute(revealer, { type: 'token', data: 'later', expiresAt: new Date(s.clock.now().getTime() + 10_000) });
    s.clock.advance(1000);
    await expect(s.get.execute(revealer, view.token.id)).rejects.toMatchObject({ code: 'not_found' });
    expect(await s.expire.sweep(1)).toBe(1);
    const expiry = s.uow.events[s.uow.events.length - 1]!;
    expect(expiry).toMatchObject({ actorType: 'system', actorId: null, operation: 'delete', entityId: view.token.id });
    expect(s.tokens.all()).toHaveLength(1);
  });

  it('tokenizes any shape, all or nothing, and detokenizes with the use rule', async () => {
    const s = setup();
    const out = (await s.tokenize.execute(revealer, {
      a: { type: 'token', data: 'one' },
      list: [{ type: 'card_number', data: '4242424242424242' }, 'kept'],
    })) as {
      a: { token: { id: string } };
      list: [{ token: { id: string } }, string];
    };
    expect(out.list[1]).toBe('kept');
    expect(s.tokens.all()).toHaveLength(2);
    await expect(
      s.tokenize.execute(revealer, [
        { type: 'token', data: 'x' },
        { type: 'card_number', data: '1' },
      ]),
    ).rejects.toMatchObject({
      fieldErrors: { '[1].data': expect.any(Array) },
    });
    expect(s.tokens.all()).toHaveLength(2);
    const detokenized = await s.detokenize.execute(revealer, {
      whole: `{{ ${out.a.token.id} }}`,
      text: `n=${'{{'} ${out.list[0].token.id} | reveal_last: 4 }}`,
    });
    expect(detokenized).toEqual({ whole: 'one', text: 'n=XXXXXXXXXXXX4242' });
    await expect(s.detokenize.execute(revealer, { x: ['{{ unknown_token }}'] })).rejects.toMatchObject({ fieldErrors: { 'x[0]': expect.any(Array) } });
    await expect(s.detokenize.execute(masker, { x: `{{ ${out.a.token.id} }}` })).rejects.toMatchObject({ code: 'validation' });
  });

  it('deletes with token:delete, logged', async () => {
    const s = setup();
    const view = await s.create.execute(revealer, { type: 'bank', data: { routing_number: '011000015', account_number: '1234567' } });
    await s.remove.execute(revealer, view.token.id);
    expect(s.uow.events.map((e) => [e.entityType, e.operation])).toEqual([
      ['bank', 'create'],
      ['bank', 'delete'],
    ]);
    await expect(s.remove.execute(revealer, view.token.id)).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('token type checks', () => {
  it('Luhn and ABA', () => {
    expect(isLuhnValid('4242424242424242')).toBe(true);
    expect(isLuhnValid('4242424242424241')).toBe(false);
    expect(isAbaRoutingNumber('011000015')).toBe(true);
    expect(isAbaRoutingNumber('011000016')).toBe(false);
    expect(isAbaRoutingNumber('01100001')).toBe(false);
  });
});
