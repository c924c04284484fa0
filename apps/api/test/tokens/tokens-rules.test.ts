import { Clock, ExpireTokens, UnitOfWork } from '@gatehouse/domain';
import type { TestApp } from '@gatehouse/test-support/test-app';
import { appWithTenant, auditEvents, Caller, createApplication, expectProblem } from '../support/application-fixtures';
import { CARD, createToken, privateApp, rule, tokensAs } from '../support/token-fixtures';

/** Access rules decide every token read, list, dedup and expiry, end to end (CONTRACT.md section 12). */
describe('tokens: access rules, search, deduplication, expiry', () => {
  let t: TestApp;
  let admin: Caller;
  let owner: string;
  beforeAll(async () => {
    ({ t, admin } = await appWithTenant());
    owner = await privateApp(t, admin, [], [rule(1, '/', 'reveal', ['token:create', 'token:read', 'token:update', 'token:delete', 'token:use'])]);
  });
  afterAll(() => t?.close());

  it('each transform decides what GET returns, the first matching rule by priority deciding', async () => {
    const pci = await createToken(t, owner, { type: 'card', data: CARD });
    const bank = await createToken(t, owner, { type: 'us_bank_account_number', data: '1234567890' });
    const pii = await createToken(t, owner, { type: 'social_security_number', data: '123-45-6789' });
    const key = await privateApp(
      t,
      admin,
      [],
      [
        rule(30, '/', 'reveal', ['token:read']),
        rule(10, '/pci/', 'mask', ['token:read']),
        rule(20, '/bank/', 'redact', ['token:read']),
        rule(5, '/pii/high/', 'reveal', ['token:create']), // grants no read: passed over
      ],
    );
    const get = async (id: string) => (await tokensAs(t, key).get(`/tokens/${id}`).expect(200)).body;
    expect((await get(pci.id)).data).toEqual({ number: '424242XXXXXX4242', expiration_month: 12, expiration_year: 2030 });
    expect(await get(bank.id)).not.toHaveProperty('data');
    expect((await get(pii.id)).data).toBe('123-45-6789');
  });

  it('a key whose rules reach none of the token containers gets 403; plain permissions act as a mask rule on /', async () => {
    const token = await createToken(t, owner, { type: 'card', data: CARD });
    const bankOnly = await privateApp(t, admin, [], [rule(1, '/bank/', 'reveal', ['token:read'])]);
    expectProblem(await tokensAs(t, bankOnly).get(`/tokens/${token.id}`), 403);
    const plain = await privateApp(t, admin, ['token:read']);
    expect((await tokensAs(t, plain).get(`/tokens/${token.id}`).expect(200)).body.data.number).toBe('424242XXXXXX4242');
  });

  it('expiring applications: conditions on the token id and container with equals and starts_with', async () => {
    const minter = await createApplication(t, admin.key, {
      name: 'minter',
      type: 'private',
      permissions: ['token:read'],
      can_create_expiring_applications: true,
    });
    const token = await createToken(t, owner, { id: `sess_${Date.now()}`, type: 'card_number', data: '4242424242424242' });
    const expiring = async (attribute: string, operator: string, value: string) =>
      (
        await createApplication(t, minter.key, {
          name: 'reveal session',
          type: 'expiring',
          rules: [{ priority: 1, conditions: [{ attribute, operator, value }], transform: 'reveal', permissions: ['token:read'] }],
        })
      ).key;
    const cases: [string, string, string, number][] = [
      ['id', 'equals', token.id, 200],
      ['id', 'equals', `${token.id}x`, 403],
      ['id', 'starts_with', 'sess_', 200],
      ['id', 'starts_with', 'other_', 403],
      ['container', 'equals', '/pci/high/', 200],
      ['container', 'equals', '/pci/', 403],
      ['container', 'starts_with', '/pci/', 200],
      ['container', 'starts_with', '/bank/', 403],
    ];
    for (const [attribute, operator, value, status] of cases) {
      const res = await tokensAs(t, await expiring(attribute, operator, value)).get(`/tokens/${token.id}`);
      expect({ attribute, operator, value, status: res.status }).toEqual({ attribute, operator, value, status });
      if (status === 200) expect(res.body.data).toBe('4242424242424242');
    }
  });

  it('GET /v2/tokens: filters, keyset paging, only the tokens the read rules reach, one log per call', async () => {
    const tag = `run${Date.now()}`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await createToken(t, owner, { type: 'token', data: `v${i}`, containers: ['/search/a/'], metadata: { tag, i: String(i) } })).id);
    }
    const hidden = await createToken(t, owner, { type: 'token', data: 'h', containers: ['/search/hidden/'], metadata: { tag } });
    const reader = await privateApp(t, admin, [], [rule(1, '/search/a/', 'reveal', ['token:read'])]);
    const list = (query: string, key = reader) => tokensAs(t, key).get(`/v2/tokens?${query}`);
    const first = (await list(`metadata.tag=${tag}&size=2`).expect(200)).body;
    expect(first.data.map((x: { id: string }) => x.id)).toEqual([ids[2], ids[1]]);
    expect(first.pagination).toEqual({ page_size: 2, next: expect.any(String) });
    const second = (await list(`metadata.tag=${tag}&size=2&start=${first.pagination.next}`).expect(200)).body;
    expect(second.data.map((x: { id: string }) => x.id)).toEqual([ids[0]]);
    expect(second.pagination).toEqual({ page_size: 2 });
    expect(second.data[0].data).toBe('v0');
    expect((await list(`metadata.tag=${tag}&metadata.i=1`).expect(200)).body.data.map((x: { id: string }) => x.id)).toEqual([ids[1]]);
    // The owner (a rule on /) sees the hidden one too; filters by container prefix, type and fingerprint.
    expect((await list(`metadata.tag=${tag}&container=/search/`, owner).expect(200)).body.data).toHaveLength(4);
    expect((await list(`metadata.tag=${tag}&container=/search/hid`, owner).expect(200)).body.data.map((x: { id: string }) => x.id)).toEqual([hidden.id]);
    expect((await list(`metadata.tag=${tag}&type=card`, owner).expect(200)).body.data).toEqual([]);
    const card = await createToken(t, owner, { type: 'card', data: CARD, metadata: { tag } });
    expect(
      (await list(`fingerprint=${encodeURIComponent(card.fingerprint)}&type=card`, owner).expect(200)).body.data.map((x: { id: string }) => x.id),
    ).toContain(card.id);
    // Strict query: unknown names, bad sizes, a bad cursor, page (keyset only) are 400s.
    for (const bad of ['nope=1', 'size=0', 'size=101', 'start=abc', 'page=2', 'type=bogus']) expectProblem(await list(bad), 400);
    expectProblem(await list(`metadata.tag=${tag}&metadata.tag=x`), 400);
    const before = (await auditEvents(t, { tenantId: admin.tenantId })).filter((e) => e.message.startsWith('Tokens listed')).length;
    await list(`metadata.tag=${tag}`).expect(200);
    const after = (await auditEvents(t, { tenantId: admin.tenantId })).filter((e) => e.message.startsWith('Tokens listed')).length;
    expect(after - before).toBe(1);
  });

  it('deduplicate_token returns the existing token of the type and fingerprint; redacted for a caller that may not read it', async () => {
    const number = '5105105105105100';
    const first = await createToken(t, owner, { type: 'card', data: { ...CARD, number }, metadata: { a: '1' } });
    const again = await tokensAs(t, owner)
      .post('/tokens', { type: 'card', data: { ...CARD, number, cvc: '999' }, deduplicate_token: true })
      .expect(201);
    expect(again.body).toMatchObject({ id: first.id, _extras: { deduplicated: true }, metadata: { a: '1' } });
    expect(again.body.data.cvc).toBe('123');
    const writer = await privateApp(t, admin, [], [rule(1, '/', 'reveal', ['token:create'])]);
    const blind = await tokensAs(t, writer)
      .post('/tokens', { type: 'card', data: { ...CARD, number }, deduplicate_token: true })
      .expect(201);
    expect(blind.body.id).toBe(first.id);
    expect(blind.body).not.toHaveProperty('data');
    expect(blind.body).not.toHaveProperty('metadata');
    const other = await tokensAs(t, owner).post('/tokens', { type: 'card_number', data: number, deduplicate_token: true }).expect(201);
    expect(other.body._extras).toEqual({ deduplicated: false });
  });

  it('an expired token is unreadable at once, and the sweep deletes it as the system', async () => {
    const token = await createToken(t, owner, { type: 'token', data: 'brief', expires_at: new Date(Date.now() + 1500).toISOString() });
    expect((await tokensAs(t, owner).get(`/tokens/${token.id}`)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    expectProblem(await tokensAs(t, owner).get(`/tokens/${token.id}`), 404);
    await new ExpireTokens(t.app.get(UnitOfWork), t.app.get(Clock)).sweep();
    const [row] = await t.database.dataSource.query('SELECT count(*)::int AS n FROM tokens WHERE tenant_id = $1 AND id = $2', [admin.tenantId, token.id]);
    expect(row.n).toBe(0);
    const events = await auditEvents(t, { entityId: token.id });
    expect(events.map((e) => [e.operation, e.actor_type])).toEqual(
      expect.arrayContaining([
        ['create', 'application'],
        ['read', 'application'],
        ['delete', 'system'],
      ]),
    );
  });
});
