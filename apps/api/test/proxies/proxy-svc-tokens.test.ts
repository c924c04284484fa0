import type { CapturedLog } from '@gatehouse/test-support/log-capture';
import type { TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { as, auditEvents, Caller, createApplication, newTenant } from '../support/application-fixtures';
import { createToken, privateApp, rule } from '../support/token-fixtures';
import { plaintextAfter, scannedApp, TokenSecrets } from '../support/token-secrets';

jest.setTimeout(60_000);

const ALL = ['token:create', 'token:read', 'token:update', 'token:delete', 'token:use'];

/**
 * Issue 24 item 7: `svc.tokens.{create, retrieve, update, delete, list}`, `svc.tokenize` and `svc.detokenize` in a
 * transform act as the proxy's application under its access rules, through a real proxy to a loopback destination.
 */
describe('svc token methods in transforms', () => {
  let t: TestApp;
  let log: CapturedLog;
  let upstream: Upstream;
  let admin: Caller;
  const secrets = new TokenSecrets();

  beforeAll(async () => {
    upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    ({ t, log } = await scannedApp('svc-tokens'));
    admin = await newTenant(t);
  }, 60_000);
  afterAll(async () => {
    await t?.close().catch(() => undefined);
    await upstream?.stop();
  });

  /**
   * A proxy bound to `applicationId` whose response transform answers `{ value }`, `script`'s result. Plaintext reaches
   * the script through `configuration` (sealed at rest), never through its code (stored as it is).
   */
  async function svcProxy(owner: Caller, applicationId: string, script: string, configuration: Record<string, string> = {}): Promise<string> {
    const code = `module.exports = async function (req) {
      const settle = (p) => p.then((body) => ({ ok: true, body }), (e) => ({ ok: false, status: e.status, data: e.data, message: String(e.message) }));
      const value = await (async () => { ${script} })();
      return { status: 200, headers: { 'content-type': 'application/json' }, body: { value } };
    };`;
    const res = await as(t, owner.key).post('/proxies', {
      name: 'svc tokens',
      destination_url: upstream.origin,
      require_auth: false,
      application: { id: applicationId },
      configuration,
      response_transform: { code },
    });
    if (res.status !== 201) throw new Error(`proxy create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.key;
  }

  async function run(proxyKey: string): Promise<any> {
    const res = await t.http().get('/proxy').set('svc-proxy-key', proxyKey);
    if (res.status !== 200) throw new Error(`proxy call failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.value;
  }

  const appWith = async (owner: Caller, permissions: string[], rules: object[]) =>
    createApplication(t, owner.key, { name: 'bound', type: 'private', permissions, ...(rules.length > 0 ? { rules } : {}) });

  it('creates, retrieves, updates, lists, tokenizes, detokenizes and deletes as the proxy application, each logged', async () => {
    const bound = await appWith(admin, [], [rule(1, '/', 'reveal', ALL)]);
    const number = secrets.card();
    const ssn = secrets.remember('123-45-' + number.slice(-4));
    const note = secrets.text('note');
    const tag = `svc_${Date.now()}`;
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const key = await svcProxy(
      admin,
      bound.id,
      `const svc = req.svc;
       const c = req.configuration;
       const created = await svc.tokens.create({ type: 'card', data: { number: c.NUMBER, expiration_month: 12, expiration_year: 2031 }, metadata: { tag: '${tag}' }, expiresAt: '${expiresAt}' });
       const read = await svc.tokens.retrieve(created.id);
       const updated = await svc.tokens.update(created.id, { metadata: { step: 'updated' } });
       const listed = await svc.tokens.list({ metadata: { tag: '${tag}' }, size: 5 });
       const tokenized = await svc.tokenize({ kept: 1, ssn: { type: 'social_security_number', data: c.SSN }, notes: [{ type: 'token', data: c.NOTE, deduplicateToken: false }] });
       const detokenized = await svc.detokenize({ last4: '{{ ' + created.id + " | json: '$.number' | last4 }}", ssn: '{{ ' + tokenized.ssn.id + ' }}' });
       await svc.tokens.delete(created.id);
       const gone = await settle(svc.tokens.retrieve(created.id));
       return { created, createdAt: created.createdAt, expires: created.expiresAt, read, updated, listed, tokenized, detokenized, gone, ids: [created.id, tokenized.ssn.id, tokenized.notes[0].id] };`,
      { NUMBER: number, SSN: ssn, NOTE: note },
    );
    const value = await run(key);
    expect(value.created).toMatchObject({ type: 'card', containers: ['/pci/high/'], created_by: bound.id, data: { number }, _extras: { deduplicated: false } });
    expect(value.created.expires_at).toBe(expiresAt);
    // The platform's client answers in camelCase: those names are readable too (and not part of the JSON).
    expect(value.createdAt).toBe(value.created.created_at);
    expect(value.expires).toBe(expiresAt);
    expect(value.created).not.toHaveProperty('createdAt');
    expect(value.read).toMatchObject({ id: value.created.id, data: { number } });
    expect(value.updated.metadata).toEqual({ tag, step: 'updated' });
    expect(value.listed.data.map((tok: { id: string }) => tok.id)).toEqual([value.created.id]);
    expect(value.tokenized.kept).toBe(1);
    expect(value.tokenized.ssn).toMatchObject({ type: 'social_security_number', data: ssn });
    expect(value.tokenized.notes[0]).toMatchObject({ type: 'token', data: note });
    expect(value.detokenized).toEqual({ last4: number.slice(-4), ssn });
    expect(value.gone).toMatchObject({ ok: false, status: 404, data: { status: 404 } });

    const [cardId, ssnId, noteId] = value.ids as string[];
    const events = await auditEvents(t, { entityId: cardId! });
    expect(events.map((e) => e.operation)).toEqual(['create', 'read', 'update', 'read', 'delete']);
    expect(events.every((e) => e.actor_id === bound.id && e.entity_type === 'card')).toBe(true);
    expect((await auditEvents(t, { entityId: ssnId! })).map((e) => e.operation)).toEqual(['create', 'read']);
    expect((await auditEvents(t, { entityId: noteId! })).map((e) => e.operation)).toEqual(['create']);
  });

  it("applies the proxy application's rules: reveal, mask, redact, and 403 without a rule", async () => {
    const owner = await privateApp(t, admin, [], [rule(1, '/', 'reveal', ALL)]);
    const number = secrets.card();
    const card = await createToken(t, owner, { type: 'card', data: { number, expiration_month: 1, expiration_year: 2032 } });
    const retrieve = `return settle(req.svc.tokens.retrieve('${card.id}'));`;
    const outcome = async (rules: object[]) => run(await svcProxy(admin, (await appWith(admin, [], rules)).id, retrieve));

    expect((await outcome([rule(1, '/pci/', 'reveal', ['token:read'])])).body.data.number).toBe(number);
    expect((await outcome([rule(1, '/pci/', 'mask', ['token:read'])])).body.data.number).toBe(`${number.slice(0, 6)}XXXXXX${number.slice(-4)}`);
    expect((await outcome([rule(1, '/pci/', 'redact', ['token:read'])])).body).not.toHaveProperty('data');
    // Priority decides: the first rule that applies and grants token:read.
    expect((await outcome([rule(1, '/pci/', 'redact', ['token:read']), rule(2, '/', 'reveal', ['token:read'])])).body).not.toHaveProperty('data');
    const refused = await outcome([rule(1, '/bank/', 'reveal', ['token:read'])]);
    expect(refused).toMatchObject({ ok: false, status: 403, data: { status: 403 } });
    expect(JSON.stringify(refused)).not.toContain(number);
    // Without token:create anywhere, create is a 403 that names the permission and writes nothing.
    const noCreate = await run(
      await svcProxy(
        admin,
        (await appWith(admin, [], [rule(1, '/', 'reveal', ['token:read'])])).id,
        `return settle(req.svc.tokens.create({ type: 'token', data: 'x' }));`,
      ),
    );
    expect(noCreate).toMatchObject({ ok: false, status: 403 });
  });

  it("validates as the API does, and another tenant's token is a 404", async () => {
    const bound = await appWith(admin, [], [rule(1, '/', 'reveal', ALL)]);
    const other = await newTenant(t);
    const theirs = await createToken(t, await privateApp(t, other, [], [rule(1, '/', 'reveal', ALL)]), { type: 'token', data: secrets.text('theirs') });
    const good = secrets.card();
    const bad = secrets.remember(`${good.slice(0, 15)}${(Number(good[15]) + 1) % 10}`);
    const key = await svcProxy(
      admin,
      bound.id,
      `return {
         read: await settle(req.svc.tokens.retrieve('${theirs.id}')),
         update: await settle(req.svc.tokens.update('${theirs.id}', { metadata: { x: 'y' } })),
         remove: await settle(req.svc.tokens.delete('${theirs.id}')),
         detokenize: await settle(req.svc.detokenize({ x: '{{ ${theirs.id} }}' })),
         invalid: await settle(req.svc.tokens.create({ type: 'card_number', data: req.configuration.BAD })),
         tooMany: await settle(req.svc.tokenize(Array.from({ length: 101 }, () => ({ type: 'token', data: 1 })))),
       };`,
      { BAD: bad },
    );
    const value = await run(key);
    for (const name of ['read', 'update', 'remove']) expect(value[name]).toMatchObject({ ok: false, status: 404 });
    expect(value.detokenize).toMatchObject({ ok: false, status: 400, data: { errors: { x: expect.any(Array) } } });
    expect(value.invalid).toMatchObject({ ok: false, status: 400, data: { errors: { data: expect.any(Array) } } });
    expect(JSON.stringify(value.invalid)).not.toContain(bad);
    expect(value.tooMany).toMatchObject({ ok: false, status: 400 });
    const [count] = await t.database.dataSource.query('SELECT count(*)::int AS n FROM tokens WHERE tenant_id = $1', [other.tenantId]);
    expect(count.n).toBe(1);
  });

  it("holds the proxy's authority: once the application that wrote the proxy is gone, svc.tokens is refused", async () => {
    const bound = await appWith(admin, [], [rule(1, '/', 'reveal', ALL)]);
    const writer = await createApplication(t, admin.key, { name: 'writer', type: 'management', permissions: ['proxy:create', 'proxy:invoke'] });
    const key = await svcProxy({ ...admin, key: writer.key, applicationId: writer.id }, bound.id, `return settle(req.svc.tokens.list({ size: 1 }));`);
    expect(await run(key)).toMatchObject({ ok: true });
    await as(t, admin.key).delete(`/applications/${writer.id}`).expect(204);
    expect(await run(key)).toMatchObject({ ok: false, status: 403 });
  });

  it('leaves no token plaintext in any table, in Redis or in the service log', async () => {
    expect(secrets.values.length).toBeGreaterThan(5);
    expect(await plaintextAfter(t, log, secrets)).toEqual([]);
  });
});
