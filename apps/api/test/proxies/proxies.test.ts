import { TestApp } from '@gatehouse/test-support/test-app';
import { auditEvents, createApplication, newTenant } from '../support/application-fixtures';
import { useProxiesApi } from './proxies-api.fixture';

/** Management of proxies: CONTRACT.md sections 3 and 6, spec 2.4, 2.5 and 4.2. */
describe('proxies API', () => {
  const env = useProxiesApi();
  let t: TestApp;
  let strict: TestApp;
  beforeAll(() => ({ t, strict } = env));
  const { create, createOk } = env;

  describe('POST /proxies', () => {
    it('creates a proxy: 201, Location, generated key, defaults, no modified_at', async () => {
      const caller = await newTenant(t);
      const res = await create(caller, { name: 'payments', destination_url: 'https://api.example.com/v1' });
      expect(res.status).toBe(201);
      expect(res.headers.location).toBe(`/proxies/${res.body.id}`);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        tenant_id: caller.tenantId,
        name: 'payments',
        key: expect.stringMatching(/^[0-9A-Za-z]{22,}$/),
        destination_url: 'https://api.example.com/v1',
        require_auth: true,
        created_by: caller.applicationId,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        modified_by: caller.applicationId,
      });
      expect(res.body).not.toHaveProperty('modified_at');

      const got = await t.http().get(`/proxies/${res.body.id}`).set('svc-api-key', caller.key).expect(200);
      expect(got.body).toEqual({ ...res.body, modified_at: res.body.created_at });
    });

    it('stores every optional field and answers application_id flat', async () => {
      const caller = await newTenant(t);
      const app = await createApplication(t, caller.key, { name: 'backend', type: 'private', permissions: ['proxy:invoke'] });
      const body = await createOk(caller, {
        request_transform: { code: 'module.exports = async (req) => ({ body: req.args.body, headers: req.args.headers });' },
        response_transform: { code: 'module.exports = async function (req) { return req.args; };' },
        application: { id: app.id },
        configuration: { TOKEN: 'abc', EMPTY: '' },
        require_auth: false,
      });
      expect(body).toMatchObject({
        request_transform: { code: expect.stringContaining('req.args.body') },
        response_transform: { code: expect.stringContaining('return req.args') },
        application_id: app.id,
        configuration: { TOKEN: 'abc', EMPTY: '' },
        require_auth: false,
      });
      expect(body).not.toHaveProperty('application');
    });

    it('generates a different key for every proxy', async () => {
      const caller = await newTenant(t);
      const keys = new Set<string>();
      for (let i = 0; i < 5; i++) keys.add((await createOk(caller)).key);
      expect(keys.size).toBe(5);
    });

    it('records an audit event naming neither the key nor the code', async () => {
      const caller = await newTenant(t);
      const code = 'module.exports = async (req) => ({ body: "SECRET-CODE-MARKER", headers: {} });';
      const body = await createOk(caller, { name: 'audited', request_transform: { code } });
      const events = await auditEvents(t, { entityId: body.id });
      expect(events).toEqual([expect.objectContaining({ operation: 'create', entity_type: 'proxy', actor_id: caller.applicationId })]);
      expect(events[0]!.message).toContain('audited');
      expect(events[0]!.message).not.toContain(body.key);
      expect(events[0]!.message).not.toContain('SECRET-CODE-MARKER');
    });

    it.each([
      ['name missing', { destination_url: 'https://a.example.com' }, 'name'],
      ['name empty', { name: '', destination_url: 'https://a.example.com' }, 'name'],
      ['name of 201 characters', { name: 'n'.repeat(201), destination_url: 'https://a.example.com' }, 'name'],
      ['name not a string', { name: 42, destination_url: 'https://a.example.com' }, 'name'],
      ['destination_url missing', { name: 'p' }, 'destination_url'],
      ['destination_url relative', { name: 'p', destination_url: '/v1/things' }, 'destination_url'],
      ['destination_url not a URL', { name: 'p', destination_url: 'not a url' }, 'destination_url'],
      ['destination_url ftp', { name: 'p', destination_url: 'ftp://files.example.com' }, 'destination_url'],
      ['destination_url without slashes', { name: 'p', destination_url: 'https:api.example.com' }, 'destination_url'],
      ['destination_url with credentials', { name: 'p', destination_url: 'https://user:pass@api.example.com' }, 'destination_url'],
      ['destination_url with a user only', { name: 'p', destination_url: 'https://user@api.example.com' }, 'destination_url'],
      ['destination_url with a query', { name: 'p', destination_url: 'https://api.example.com/v1?x=1' }, 'destination_url'],
      ['destination_url with a fragment', { name: 'p', destination_url: 'https://api.example.com/v1#top' }, 'destination_url'],
      ['destination_url over 400 characters', { name: 'p', destination_url: `https://api.example.com/${'a'.repeat(380)}` }, 'destination_url'],
      ['key supplied', { name: 'p', destination_url: 'https://a.example.com', key: 'abcdefghijklmnopqrstuvwxyz' }, 'key'],
      [
        'application_id supplied flat',
        { name: 'p', destination_url: 'https://a.example.com', application_id: '3f1b2c4d-0000-4000-8000-000000000000' },
        'application_id',
      ],
      ['unknown field', { name: 'p', destination_url: 'https://a.example.com', colour: 'blue' }, 'colour'],
      ['application id not a UUID', { name: 'p', destination_url: 'https://a.example.com', application: { id: 'nope' } }, 'application.id'],
      ['configuration not an object', { name: 'p', destination_url: 'https://a.example.com', configuration: 'x=1' }, 'configuration'],
      ['configuration value not a string', { name: 'p', destination_url: 'https://a.example.com', configuration: { A: 1 } }, 'configuration.A'],
      [
        'configuration value over 10,000 characters',
        { name: 'p', destination_url: 'https://a.example.com', configuration: { A: 'v'.repeat(10_001) } },
        'configuration.A',
      ],
      [
        'configuration key over 100 characters',
        { name: 'p', destination_url: 'https://a.example.com', configuration: { ['k'.repeat(101)]: 'v' } },
        `configuration.${'k'.repeat(100)}...`,
      ],
      [
        'configuration of 101 entries',
        { name: 'p', destination_url: 'https://a.example.com', configuration: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`K${i}`, 'v'])) },
        'configuration',
      ],
      ['require_auth not a boolean', { name: 'p', destination_url: 'https://a.example.com', require_auth: 'yes' }, 'require_auth'],
      ['transform without code', { name: 'p', destination_url: 'https://a.example.com', request_transform: {} }, 'request_transform.code'],
      ['transform code not a string', { name: 'p', destination_url: 'https://a.example.com', response_transform: { code: 7 } }, 'response_transform.code'],
      [
        'transform code over 50,000 characters',
        { name: 'p', destination_url: 'https://a.example.com', request_transform: { code: `module.exports = async (r) => r.args; //${'x'.repeat(50_000)}` } },
        'request_transform.code',
      ],
      [
        'transform with an unknown member',
        { name: 'p', destination_url: 'https://a.example.com', request_transform: { code: 'x', lang: 'js' } },
        'request_transform.lang',
      ],
    ])('400 for %s, naming the field', async (_case, body, field) => {
      const caller = await newTenant(t);
      const res = await create(caller, body);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.errors).toHaveProperty([field]);
    });

    it('stores a configuration member named __proto__ as data, exactly the map sent', async () => {
      const caller = await newTenant(t);
      const res = await t
        .http()
        .post('/proxies')
        .set('svc-api-key', caller.key)
        .set('content-type', 'application/json')
        .send('{"name": "p", "destination_url": "https://a.example.com", "configuration": {"__proto__": "x", "A": "b"}}');
      expect(res.status).toBe(201);
      // Member order is not kept (jsonb), members are.
      expect(Object.entries(res.body.configuration).sort()).toEqual([
        ['A', 'b'],
        ['__proto__', 'x'],
      ]);
      const read = await t.http().get(`/proxies/${res.body.id}`).set('svc-api-key', caller.key).expect(200);
      expect(Object.entries(read.body.configuration).sort()).toEqual([
        ['A', 'b'],
        ['__proto__', 'x'],
      ]);
    });

    it('reports every problem at once', async () => {
      const caller = await newTenant(t);
      const res = await create(caller, { name: '', destination_url: 'ftp://x', configuration: { A: 1 } }).expect(400);
      expect(Object.keys(res.body.errors)).toEqual(expect.arrayContaining(['name', 'destination_url', 'configuration.A']));
    });

    it('400 for a body that is not a JSON object', async () => {
      const caller = await newTenant(t);
      for (const body of ['[]', '"proxy"', 'null', '{"name": ']) {
        const res = await t.http().post('/proxies').set('svc-api-key', caller.key).set('content-type', 'application/json').send(body);
        expect(res.status).toBe(400);
      }
    });

    it('400 naming line and column for transform code that does not compile', async () => {
      const caller = await newTenant(t);
      const res = await create(caller, {
        name: 'p',
        destination_url: 'https://a.example.com',
        request_transform: { code: 'module.exports = async function (req) {\n  return { body: req.args.body,, headers: {} };\n};' },
        response_transform: { code: 'module.exports = async (req) => {' },
      }).expect(400);
      expect(res.body.errors['request_transform.code']).toEqual([expect.stringMatching(/line 2, column \d+/)]);
      expect(res.body.errors['response_transform.code']).toEqual([expect.stringMatching(/line 1, column \d+/)]);
    });

    it('accepts the application of the tenant when public or private, refuses anything else without telling whether it exists', async () => {
      const caller = await newTenant(t);
      const other = await newTenant(t);
      const pub = await createApplication(t, caller.key, { name: 'web', type: 'public', permissions: ['token:create'] });
      const priv = await createApplication(t, caller.key, { name: 'backend', type: 'private', permissions: ['token:read'] });
      const management = await createApplication(t, caller.key, { name: 'ops', type: 'management', permissions: ['proxy:read'] });
      const expiring = await createApplication(t, caller.key, {
        name: 'reveal',
        type: 'expiring',
        rules: [{ priority: 1, transform: 'reveal', permissions: ['token:read'], conditions: [{ attribute: 'id', operator: 'equals', value: 't1' }] }],
      });
      const foreign = await createApplication(t, other.key, { name: 'theirs', type: 'private', permissions: ['token:read'] });

      expect((await createOk(caller, { application: { id: pub.id } })).application_id).toBe(pub.id);
      expect((await createOk(caller, { application: { id: priv.id } })).application_id).toBe(priv.id);
      const refusals = [];
      for (const id of [management.id, expiring.id, foreign.id, '3f1b2c4d-0000-4000-8000-000000000000']) {
        const res = await create(caller, { name: 'p', destination_url: 'https://a.example.com', application: { id } });
        expect(res.status).toBe(400);
        refusals.push(res.body.errors['application.id']);
      }
      // Another tenant's application reads exactly like one that does not exist.
      expect(new Set(refusals.map((r) => JSON.stringify(r))).size).toBe(1);
    });

    it('refuses http:// unless PROXY_ALLOW_HTTP, and literal non-public addresses unless allowed', async () => {
      const caller = await newTenant(strict);
      for (const destination of [
        'http://api.example.com',
        'https://127.0.0.1',
        'https://127.0.0.1:8443/x',
        'https://[::1]',
        'https://[::ffff:127.0.0.1]',
        'https://169.254.169.254/latest/meta-data',
        'https://10.0.0.1',
        'https://172.16.5.4',
        'https://192.168.1.1',
        'https://100.64.0.1',
        'https://0.0.0.0',
        'https://[fe80::1]',
        'https://[fd00::1]',
        'https://224.0.0.1',
        'https://2130706433',
        'https://0x7f.1',
      ]) {
        const res = await create(caller, { name: 'p', destination_url: destination }, strict);
        expect({ destination, status: res.status }).toEqual({ destination, status: 400 });
        expect(res.body.errors).toHaveProperty(['destination_url']);
      }
      // Names are resolved and checked at connect time; a public literal address is fine.
      for (const destination of ['https://localhost:8443', 'https://93.184.215.14/v1', 'https://[2606:4700::1111]']) {
        const res = await create(caller, { name: 'p', destination_url: destination }, strict);
        expect({ destination, status: res.status }).toEqual({ destination, status: 201 });
      }
      // With PROXY_ALLOW_HTTP and 127.0.0.0/8 allowed, loopback http destinations are accepted, other private ones are not.
      const allowed = await newTenant(t);
      await create(allowed, { name: 'p', destination_url: 'http://127.0.0.1:9/x' }).expect(201);
      await create(allowed, { name: 'p', destination_url: 'https://[::ffff:127.0.0.1]:9' }).expect(201);
      await create(allowed, { name: 'p', destination_url: 'https://10.0.0.1' }).expect(400);
    });
  });

  describe('GET /proxies', () => {
    it('lists newest first with offset paging and the cursor', async () => {
      const caller = await newTenant(t);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await createOk(caller, { name: `p${i}` })).id);
      const newestFirst = [...ids].reverse();

      const first = await t.http().get('/proxies?size=2').set('svc-api-key', caller.key).expect(200);
      expect(first.body.pagination).toEqual({ total_items: 5, page_number: 1, page_size: 2, total_pages: 3, next: expect.any(String) });
      expect(first.body.data.map((p: { id: string }) => p.id)).toEqual(newestFirst.slice(0, 2));
      expect(first.body.data[0]).toHaveProperty('modified_at');

      const third = await t.http().get('/proxies?size=2&page=3').set('svc-api-key', caller.key).expect(200);
      expect(third.body.data.map((p: { id: string }) => p.id)).toEqual(newestFirst.slice(4));
      expect(third.body.pagination).not.toHaveProperty('next');
      const beyond = await t.http().get('/proxies?size=2&page=9').set('svc-api-key', caller.key).expect(200);
      expect(beyond.body.data).toEqual([]);

      const seen: string[] = [];
      let start: string | undefined;
      do {
        const res = await t
          .http()
          .get('/proxies')
          .query({ size: 2, ...(start ? { start } : {}) })
          .set('svc-api-key', caller.key)
          .expect(200);
        seen.push(...res.body.data.map((p: { id: string }) => p.id));
        if (start) expect(res.body.pagination).not.toHaveProperty('total_items');
        start = res.body.pagination.next;
      } while (start);
      expect(seen).toEqual(newestFirst);
    });

    it('filters by repeated id and by name, with * as the only wildcard', async () => {
      const caller = await newTenant(t);
      const names = ['Stripe payments', 'stripe refunds', 'Adyen 100%', 'Adyen 1000', 'under_score', 'underXscore', 'star*name'];
      const byName: Record<string, string> = {};
      for (const name of names) byName[name] = (await createOk(caller, { name })).id;
      const list = async (query: string) => {
        const res = await t.http().get(`/proxies?${query}`).set('svc-api-key', caller.key).expect(200);
        return res.body.data.map((p: { name: string }) => p.name).sort();
      };
      expect(await list('name=STRIPE')).toEqual(['Stripe payments', 'stripe refunds']);
      expect(await list('name=stripe*s')).toEqual(['Stripe payments', 'stripe refunds']);
      expect(await list('name=s*refunds')).toEqual(['stripe refunds']);
      expect(await list(`name=${encodeURIComponent('100%')}`)).toEqual(['Adyen 100%']);
      expect(await list('name=under_score')).toEqual(['under_score']);
      expect(await list(`name=${encodeURIComponent('r*n')}`)).toEqual(['Stripe payments', 'star*name', 'stripe refunds']);
      expect(await list('name=adyen*00')).toEqual(['Adyen 100%', 'Adyen 1000']);
      expect(await list(`name=${encodeURIComponent('r*name')}`)).toEqual(['star*name']);
      expect(await list('name=nothing-like-it')).toEqual([]);
      expect(await list(`id=${byName['Adyen 1000']}&id=${byName['star*name']}`)).toEqual(['Adyen 1000', 'star*name']);
      expect(await list(`id=${byName['Adyen 1000']}&name=stripe`)).toEqual([]);
    });

    it("never lists another tenant's proxies", async () => {
      const mine = await newTenant(t);
      const theirs = await newTenant(t);
      const foreign = await createOk(theirs, { name: 'theirs' });
      const res = await t.http().get(`/proxies?id=${foreign.id}`).set('svc-api-key', mine.key).expect(200);
      expect(res.body.data).toEqual([]);
      expect(res.body.pagination.total_items).toBe(0);
    });

    it.each(['size=0', 'size=101', 'page=0', 'page=x', 'id=nope', 'start=garbage', `name=${'n'.repeat(201)}`, 'colour=blue'])('400 for %s', async (query) => {
      const caller = await newTenant(t);
      await t.http().get(`/proxies?${query}`).set('svc-api-key', caller.key).expect(400);
    });
  });
});
