import { randomBytes } from 'node:crypto';
import { Clock, ExpireTokens, UnitOfWork } from '@gatehouse/domain';
import { captureLog, CapturedLog } from '@gatehouse/test-support/log-capture';
import { findPlaintext } from '@gatehouse/test-support/plaintext-scan';
import { TEST_REDIS_URL } from '@gatehouse/test-support/test-env';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { auditEvents, Caller, expectProblem, newTenant } from '../support/application-fixtures';
import { createToken, privateApp, rule, tokensAs } from '../support/token-fixtures';

/** POST /tokenize and /detokenize end to end, their logs, and a scan for every plaintext the run wrote. */
describe('tokens: tokenize, detokenize, plaintext scan', () => {
  let t: TestApp;
  let log: CapturedLog;
  let admin: Caller;
  let owner: string;
  const secrets: string[] = [];
  /** A fresh, unguessable value of `digits` digits (Luhn-valid when `card`), remembered for the scan. */
  const secretDigits = (digits: number, card = false): string => {
    let value = '4';
    while (value.length < digits - (card ? 1 : 0)) value += String(randomBytes(1)[0]! % 10);
    if (card) {
      let sum = 0;
      for (let i = 0; i < value.length; i++) {
        let d = Number(value[value.length - 1 - i]);
        if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
        sum += d;
      }
      value += String((10 - (sum % 10)) % 10);
    }
    secrets.push(value);
    return value;
  };

  beforeAll(async () => {
    log = captureLog('debug');
    t = await startTestApp(
      { REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: `tok-${randomBytes(4).toString('hex')}`, LOG_LEVEL: 'debug' },
      { logger: log.nest, accessLog: log.root },
    );
    admin = await newTenant(t);
    owner = await privateApp(t, admin, [], [rule(1, '/', 'reveal', ['token:create', 'token:read', 'token:update', 'token:delete', 'token:use'])]);
  });
  afterAll(() => t?.close());

  it('tokenizes any shape: objects with type and data become tokens, the rest is kept', async () => {
    const number = secretDigits(16, true);
    const digits = secretDigits(9);
    const ssn = `${digits.slice(0, 3)}-${digits.slice(3, 5)}-${digits.slice(5)}`;
    secrets.push(ssn);
    const res = await tokensAs(t, owner)
      .post('/tokenize', { customer: { name: 'kept', card: { type: 'card_number', data: number }, ssn: { type: 'social_security_number', data: ssn } }, n: 1 })
      .expect(200);
    expect(res.body.customer.name).toBe('kept');
    expect(res.body.n).toBe(1);
    expect(res.body.customer.card).toMatchObject({ type: 'card_number', data: number, containers: ['/pci/high/'], _extras: { deduplicated: false } });
    expect(res.body.customer.ssn).toMatchObject({ type: 'social_security_number', data: ssn });
    const array = await tokensAs(t, owner)
      .post('/tokenize', [{ type: 'token', data: { secret: secretDigits(12) } }, 'x'])
      .expect(200);
    expect(array.body[0]).toMatchObject({ type: 'token' });
    expect(array.body[1]).toBe('x');
    const ids = [res.body.customer.card.id, res.body.customer.ssn.id, array.body[0].id];
    for (const id of ids) expect((await auditEvents(t, { entityId: id })).map((e) => e.operation)).toContain('create');
  });

  it('is all or nothing: one bad token request refuses the call, naming where; at most 100 tokens', async () => {
    const [before] = await t.database.dataSource.query('SELECT count(*)::int AS n FROM tokens WHERE tenant_id = $1', [admin.tenantId]);
    const res = await tokensAs(t, owner).post('/tokenize', { a: { type: 'token', data: 'ok' }, b: [{ type: 'card_number', data: '4242424242424241' }] });
    expectProblem(res, 400, ['b[0].data']);
    expect(JSON.stringify(res.body)).not.toContain('4242424242424241');
    expectProblem(
      await tokensAs(t, owner).post(
        '/tokenize',
        Array.from({ length: 101 }, () => ({ type: 'token', data: 1 })),
      ),
      400,
      ['body'],
    );
    expectProblem(await tokensAs(t, owner).post('/tokenize', { a: { type: 'token', data: 1, extra: true } }), 400, ['a.extra']);
    const [after] = await t.database.dataSource.query('SELECT count(*)::int AS n FROM tokens WHERE tenant_id = $1', [admin.tenantId]);
    expect(after.n).toBe(before.n);
    const publicKey = await privateApp(t, admin, ['token:read']);
    expectProblem(await tokensAs(t, publicKey).post('/tokenize', { type: 'token', data: 1 }), 403);
  });

  it('detokenizes {{ id }} and {{ id | json: ... }} with token:use, a whole expression keeping its JSON value', async () => {
    const number = secretDigits(16, true);
    const card = await createToken(t, owner, { type: 'card', data: { number, expiration_month: 1, expiration_year: 2031 } });
    const plain = await createToken(t, owner, { type: 'token', data: { nested: { v: 42 } } });
    const res = await tokensAs(t, owner)
      .post('/detokenize', {
        card: `{{ ${card.id} }}`,
        number: `{{ ${card.id} | json: '$.number' }}`,
        text: `ends ${'{{'} ${card.id} | json: '$.number' | last4 }}`,
        v: [`{{${plain.id}|json:'$.nested.v'}}`],
      })
      .expect(200);
    expect(res.body).toEqual({ card: { number, expiration_month: 1, expiration_year: 2031 }, number, text: `ends ${number.slice(-4)}`, v: [42] });
    expect((await auditEvents(t, { entityId: card.id })).filter((e) => e.message.includes('detokenized'))).toHaveLength(1);
  });

  it("an unknown, another tenant's, expired or unusable token is a 400 naming where, never a blank", async () => {
    const other = await newTenant(t);
    const otherKey = await privateApp(t, other, [], [rule(1, '/', 'reveal', ['token:create', 'token:use'])]);
    const foreign = await createToken(t, otherKey, { type: 'token', data: 'theirs' });
    const masked = await privateApp(t, admin, [], [rule(1, '/', 'redact', ['token:use'])]);
    const mine = await createToken(t, owner, { type: 'token', data: 'mine' });
    expectProblem(await tokensAs(t, owner).post('/detokenize', { a: { b: '{{ no_such_token }}' } }), 400, ['a.b']);
    expectProblem(await tokensAs(t, owner).post('/detokenize', { x: `{{ ${foreign.id} }}` }), 400, ['x']);
    expectProblem(await tokensAs(t, masked).post('/detokenize', { x: `{{ ${mine.id} }}` }), 400, ['x']);
    expectProblem(await tokensAs(t, owner).post('/detokenize', { x: `{{ ${mine.id} | nope }}` }), 400, ['x']);
    const noUse = await privateApp(t, admin, ['token:read']);
    expectProblem(await tokensAs(t, noUse).post('/detokenize', { x: `{{ ${mine.id} }}` }), 403);
    const brief = await createToken(t, owner, { type: 'token', data: 'brief', expires_at: new Date(Date.now() + 1000).toISOString() });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expectProblem(await tokensAs(t, owner).post('/detokenize', { x: `{{ ${brief.id} }}` }), 400, ['x']);
    await new ExpireTokens(t.app.get(UnitOfWork), t.app.get(Clock)).sweep();
  });

  it('bounds what one body may detokenize into (expressions, and the characters they insert); a refused body logs no read', async () => {
    const large = await createToken(t, owner, { type: 'token', data: 'x'.repeat(30_000) });
    const small = await createToken(t, owner, { type: 'token', data: 'y' });
    const detokenize = (body: unknown) => tokensAs(t, owner).post('/detokenize', body);
    const refs = (id: string, n: number, filters = '') => Array.from({ length: n }, () => `{{ ${id} ${filters}}}`);

    // 1,001 expressions of a one-character token, in one string and in many.
    const many = await detokenize({ text: refs(small.id, 1_001).join(' ') });
    expectProblem(many, 400, ['body']);
    expect(many.body.errors.body[0]).toBe('holds 1001 expressions; at most 1000 are allowed');
    expectProblem(await detokenize(refs(small.id, 1_001)), 400, ['body']);
    // 300 x 30,000 characters is past 8 MiB: refused whole, as text and as values (a 9 MB body from a 13 kB request).
    for (const body of [{ items: refs(large.id, 300) }, { text: refs(large.id, 300).join('') }]) {
      const refused = await detokenize(body);
      expectProblem(refused, 400, ['body']);
      expect(refused.body.errors.body[0]).toBe('detokenizes into more than 8388608 characters of token data; at most 8388608 are allowed');
    }
    // Through a filter, the expressions' shared budget of work runs out first (append charges what it makes).
    const appended = await detokenize({ items: refs(large.id, 300, "| append: '' ") });
    expectProblem(appended, 400);
    expect(Object.values(appended.body.errors).flat()).toContain('expression failed: memory alloc limit exceeded');
    // A failing expression after good ones: refused, and nothing of the body is logged as read.
    expectProblem(await detokenize({ a: `{{ ${small.id} }}`, b: `{{ ${large.id} | nope }}` }), 400, ['b']);
    const reads = async (id: string) => (await auditEvents(t, { entityId: id })).filter((e) => e.message.includes('detokenized')).length;
    expect([await reads(large.id), await reads(small.id)]).toEqual([0, 0]);

    // Within both bounds: 1,000 expressions (750 + 250), and 250 x 30,000 characters.
    const within = await detokenize({ text: refs(small.id, 750).join(''), items: refs(large.id, 250) }).expect(200);
    expect(within.body.text).toBe('y'.repeat(750));
    expect(within.body.items).toHaveLength(250);
    expect(within.body.items.every((item: string) => item.length === 30_000)).toBe(true);
    expect([await reads(large.id), await reads(small.id)]).toEqual([1, 1]);
  });

  it("shares one budget of expression work among a call's expressions: tokenize's masks, detokenize's filters", async () => {
    // About 450,000 of liquidjs's memory units (1,048,576 for one expression alone, 8 times that for one call).
    const heavy = `data ${'| split: "" | sort | join: "" '.repeat(5)}| size`;
    const data = 'x'.repeat(30_000);
    const alone = await tokensAs(t, owner)
      .post('/tokens', { type: 'token', data, mask: `{{ ${heavy} }}` })
      .expect(201);
    expect(alone.body.mask).toBe(`{{ ${heavy} }}`);
    const requests = Array.from({ length: 19 }, () => ({ type: 'token', data, mask: `{{ ${heavy} }}`, metadata: { batch: 'heavy' } }));
    const tokenized = await tokensAs(t, owner).post('/tokenize', requests);
    expectProblem(tokenized, 400);
    expect(Object.values(tokenized.body.errors).flat()).toContain('expression failed: memory alloc limit exceeded');
    expect((await tokensAs(t, owner).get('/v2/tokens?metadata.batch=heavy')).body.data).toEqual([]);
    await tokensAs(t, owner).post('/tokenize', requests.slice(0, 18)).expect(200);

    const filters = heavy.slice('data '.length);
    const detokenized = await tokensAs(t, owner).post('/detokenize', { items: Array.from({ length: 19 }, () => `{{ ${alone.body.id} ${filters} }}`) });
    expectProblem(detokenized, 400);
    expect(Object.values(detokenized.body.errors).flat()).toContain('expression failed: memory alloc limit exceeded');
    const within = await tokensAs(t, owner)
      .post('/detokenize', { items: Array.from({ length: 18 }, () => `{{ ${alone.body.id} ${filters} }}`) })
      .expect(200);
    expect(within.body.items).toEqual(Array.from({ length: 18 }, () => 30_000));
  });

  it('leaves no plaintext it wrote in any table, in Redis or in the service log', async () => {
    // Create, read, update, list, delete: every path that handles data.
    const number = secretDigits(16, true);
    const created = await createToken(t, owner, { type: 'card', data: { number, cvc: '987' }, metadata: { tag: 'scan' } });
    await tokensAs(t, owner).get(`/tokens/${created.id}`).expect(200);
    const replacement = secretDigits(16, true);
    await tokensAs(t, owner)
      .patch(`/tokens/${created.id}`, { data: { number: replacement } })
      .expect(200);
    await tokensAs(t, owner).get('/v2/tokens?metadata.tag=scan').expect(200);
    const bank = secretDigits(12);
    await createToken(t, owner, { type: 'us_bank_account_number', data: bank });
    await tokensAs(t, owner).post('/tokens', { type: 'card_number', data: `${number.slice(0, 15)}0` }); // refused or not, never echoed
    await t.close(); // everything written and flushed
    t = await startTestApp();
    expect(await findPlaintext(t.database.dataSource, TEST_REDIS_URL, secrets)).toEqual([]);
    const output = log.text();
    expect(output.length).toBeGreaterThan(0);
    expect(secrets.filter((secret) => output.includes(secret))).toEqual([]);
  });
});
