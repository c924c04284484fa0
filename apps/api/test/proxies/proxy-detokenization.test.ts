import type { IncomingHttpHeaders } from 'node:http';
import type { CapturedLog } from '@gatehouse/test-support/log-capture';
import type { TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { as, auditEvents, Caller, createApplication, expectProblem, newTenant } from '../support/application-fixtures';
import { createToken, privateApp, rule } from '../support/token-fixtures';
import { plaintextAfter, scannedApp, TokenSecrets } from '../support/token-secrets';

jest.setTimeout(60_000);

interface Received {
  body: string;
  headers: IncomingHttpHeaders;
}

/**
 * Issue 24 item 7: a proxy with require_auth detokenizes the `{{ <token id> }}` expressions of the request's body (JSON
 * and text) and headers with the caller's key, before the request transform runs, and never anything in the response;
 * a proxy without require_auth detokenizes nothing.
 */
describe('detokenizing proxies', () => {
  let t: TestApp;
  let log: CapturedLog;
  let upstream: Upstream;
  let admin: Caller;
  let owner: string;
  let received: Received[] = [];
  const secrets = new TokenSecrets();

  beforeAll(async () => {
    // Answers with the `reflect` query parameter, so a response can carry an expression back to the caller.
    upstream = await startUpstream((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
        const reflect = new URL(req.url ?? '/', 'http://x').searchParams.get('reflect');
        res.writeHead(200, { 'content-type': 'application/json', 'x-reflect': reflect ?? '' });
        res.end(JSON.stringify({ reflect }));
      });
    });
    ({ t, log } = await scannedApp('detok'));
    admin = await newTenant(t);
    owner = await privateApp(t, admin, [], [rule(1, '/', 'reveal', ['token:create', 'token:read'])]);
  }, 60_000);
  afterAll(async () => {
    await t?.close().catch(() => undefined);
    await upstream?.stop();
  });
  beforeEach(() => {
    received = [];
  });

  async function proxy(body: Record<string, unknown> = {}): Promise<string> {
    const res = await as(t, admin.key).post('/proxies', { name: 'outbound', destination_url: upstream.origin, require_auth: true, ...body });
    if (res.status !== 201) throw new Error(`proxy create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.key;
  }

  /** A caller of the tenant: proxy:invoke, and `rules`. */
  const caller = async (rules: object[]) =>
    (await createApplication(t, admin.key, { name: 'caller', type: 'private', permissions: ['proxy:invoke'], rules })).key;
  const invoke = (proxyKey: string, key: string, path = '/proxy') => t.http().post(path).set('svc-proxy-key', proxyKey).set('svc-api-key', key);

  async function cardToken(): Promise<{ id: string; number: string }> {
    const number = secrets.card();
    const token = await createToken(t, owner, { type: 'card', data: { number, expiration_month: 4, expiration_year: 2033, cvc: '321' } });
    return { id: token.id, number };
  }

  it("replaces expressions in a JSON body and in headers with the caller's key, before the request transform, never in the response", async () => {
    const card = await cardToken();
    const secret = secrets.text('api_secret');
    const plain = await createToken(t, owner, { type: 'token', data: secret });
    const user = await createApplication(t, admin.key, {
      name: 'caller',
      type: 'private',
      permissions: ['proxy:invoke'],
      rules: [rule(1, '/', 'reveal', ['token:use'])],
    });
    const transformed = await proxy({
      request_transform: {
        code: `module.exports = async (req) => ({ body: { seen: req.args.body, auth: req.args.headers.authorization }, headers: req.args.headers });`,
      },
    });
    const expression = `{{ ${card.id} }}`;
    const res = await invoke(transformed, user.key, `/proxy?reflect=${encodeURIComponent(expression)}`)
      .set('authorization', `Bearer {{ ${plain.id} }}`)
      .send({ number: `{{ ${card.id} | json: '$.number' }}`, card: expression, text: `last four {{ ${card.id} | json: '$.number' | last4 }}`, kept: 1 });
    expect(res.status).toBe(200);
    // The response is the destination's, expressions and all: nothing detokenized on the way back.
    expect(res.body).toEqual({ reflect: expression });
    expect(res.headers['x-reflect']).toBe(expression);
    expect(received).toHaveLength(1);
    const sent = JSON.parse(received[0]!.body);
    expect(sent.seen).toEqual({
      number: card.number,
      card: { number: card.number, expiration_month: 4, expiration_year: 2033, cvc: '321' },
      text: `last four ${card.number.slice(-4)}`,
      kept: 1,
    });
    expect(sent.auth).toBe(`Bearer ${secret}`);
    expect(received[0]!.headers.authorization).toBe(`Bearer ${secret}`);
    expect(JSON.stringify(res.body)).not.toContain(card.number);
    // Each token used is logged as a read by the caller.
    for (const id of [card.id, plain.id]) {
      const reads = (await auditEvents(t, { entityId: id })).filter((e) => e.operation === 'read');
      expect(reads).toHaveLength(1);
      expect(reads[0]).toMatchObject({ actor_id: user.id, message: expect.stringContaining('detokenized') });
    }
  });

  it('replaces expressions in a text body; a mask rule gives the mask', async () => {
    const card = await cardToken();
    const plainProxy = await proxy();
    const revealing = await caller([rule(1, '/pci/', 'reveal', ['token:use'])]);
    const text = await invoke(plainProxy, revealing).set('content-type', 'text/plain').send(`pan={{ ${card.id} | json: '$.number' }}&x={{ two words }}`);
    expect(text.status).toBe(200);
    expect(received[0]!.body).toBe(`pan=${card.number}&x={{ two words }}`);
    expect(received[0]!.headers['content-length']).toBe(String(Buffer.byteLength(received[0]!.body)));
    const masking = await caller([rule(1, '/pci/', 'mask', ['token:use'])]);
    await invoke(plainProxy, masking)
      .send({ number: `{{ ${card.id} | json: '$.number' }}` })
      .expect(200);
    expect(JSON.parse(received[1]!.body)).toEqual({ number: `${card.number.slice(0, 6)}XXXXXX${card.number.slice(-4)}` });
  });

  it('refuses without token:use, and an unknown, unusable or foreign token is a 400 naming where; nothing is sent', async () => {
    const card = await cardToken();
    const plainProxy = await proxy();
    const body = { card: `{{ ${card.id} | json: '$.number' }}` };
    expectProblem(await invoke(plainProxy, await caller([])).send(body), 403);
    // A caller without token:use still sends requests without expressions.
    await invoke(plainProxy, await caller([]))
      .send({ plain: 'text {{ not an expression }}' })
      .expect(200);
    const elsewhere = await caller([rule(1, '/bank/', 'reveal', ['token:use'])]);
    expectProblem(await invoke(plainProxy, elsewhere).send(body), 400, ['body.card']);
    const redacting = await caller([rule(1, '/', 'redact', ['token:use'])]);
    expectProblem(await invoke(plainProxy, redacting).send(body), 400, ['body.card']);
    const revealing = await caller([rule(1, '/', 'reveal', ['token:use'])]);
    expectProblem(await invoke(plainProxy, revealing).send({ card: '{{ no_such_token }}' }), 400, ['body.card']);
    expectProblem(await invoke(plainProxy, revealing).set('x-card', '{{ no_such_token }}').send({}), 400, ['headers.x-card']);
    const other = await newTenant(t);
    const foreign = await createToken(t, await privateApp(t, other, [], [rule(1, '/', 'reveal', ['token:create'])]), {
      type: 'token',
      data: secrets.text('foreign'),
    });
    expectProblem(await invoke(plainProxy, revealing).send({ x: `{{ ${foreign.id} }}` }), 400, ['body.x']);
    // POST /detokenize's bounds: 300 x 30,000 characters of token data from a 13 kB request is past 8 MiB.
    const large = await createToken(t, owner, { type: 'token', data: 'z'.repeat(30_000) });
    expectProblem(await invoke(plainProxy, revealing).send({ items: Array.from({ length: 300 }, () => `{{ ${large.id} }}`) }), 400, ['body']);
    expect(received).toHaveLength(1);
    expect((await auditEvents(t, { entityId: card.id })).filter((e) => e.operation === 'read')).toHaveLength(0);
  });

  it('a proxy without require_auth detokenizes nothing: expressions pass as text', async () => {
    const card = await cardToken();
    const open = await proxy({ require_auth: false });
    const body = { card: `{{ ${card.id} | json: '$.number' }}` };
    await t.http().post('/proxy').set('svc-proxy-key', open).set('x-card', `{{ ${card.id} }}`).send(body).expect(200);
    expect(JSON.parse(received[0]!.body)).toEqual(body);
    expect(received[0]!.headers['x-card']).toBe(`{{ ${card.id} }}`);
  });

  it('leaves no token plaintext in any table, in Redis or in the service log', async () => {
    expect(secrets.values.length).toBeGreaterThan(5);
    expect(await plaintextAfter(t, log, secrets)).toEqual([]);
  });
});
