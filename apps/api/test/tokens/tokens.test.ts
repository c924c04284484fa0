import type { TestApp } from '@gatehouse/test-support/test-app';
import { appWithTenant, auditEvents, Caller, expectProblem, newTenant } from '../support/application-fixtures';
import { CARD, createToken, privateApp, publicApp, rule, tokensAs } from '../support/token-fixtures';

/** The Tokens API end to end (CONTRACT.md section 12): create, read, update, delete, validation, the 403/404 split. */
describe('tokens API', () => {
  let t: TestApp;
  let admin: Caller;
  let reader: string; // private, plain permissions: mask
  let revealer: string; // private, a reveal rule on /
  beforeAll(async () => {
    ({ t, admin } = await appWithTenant());
    reader = await privateApp(t, admin, ['token:create', 'token:read', 'token:update', 'token:delete']);
    revealer = await privateApp(t, admin, [], [rule(1, '/', 'reveal', ['token:create', 'token:read', 'token:update', 'token:delete', 'token:use'])]);
  });
  afterAll(() => t?.close());

  describe('POST /tokens and GET /tokens/{id}', () => {
    it('creates a card with the type defaults: container, fingerprint, mask (first six, last four, no cvc)', async () => {
      const res = await tokensAs(t, reader).post('/tokens', { type: 'card', data: CARD, metadata: { customer: 'c_1' } });
      expect(res.status).toBe(201);
      expect(res.headers.location).toBe(`/tokens/${res.body.id}`);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        tenant_id: admin.tenantId,
        type: 'card',
        data: { number: '424242XXXXXX4242', expiration_month: 12, expiration_year: 2030 },
        mask: { number: '{{ data.number | reveal: 6, 4 }}', expiration_month: '{{ data.expiration_month }}', expiration_year: '{{ data.expiration_year }}' },
        containers: ['/pci/high/'],
        metadata: { customer: 'c_1' },
        fingerprint: expect.any(String),
        fingerprint_expression: '{{ data.number }}',
        created_by: expect.any(String),
        created_at: expect.stringMatching(/Z$/),
        _extras: { deduplicated: false },
      });
      const read = await tokensAs(t, revealer).get(`/tokens/${res.body.id}`);
      expect(read.status).toBe(200);
      expect(read.body.data).toEqual(CARD);
      expect(read.body).not.toHaveProperty('_extras');
      const masked = await tokensAs(t, reader).get(`/tokens/${res.body.id}`);
      expect(masked.body.data).toEqual({ number: '424242XXXXXX4242', expiration_month: 12, expiration_year: 2030 });
      // A mask reads back in the order it was written (toEqual ignores member order).
      const mask = { zeta: '{{ data | slice: 0, 1 }}', a: '{{ data | size }}', mid: '{{ data }}' };
      const custom = await createToken(t, revealer, { type: 'token', data: 'abc', mask });
      expect(Object.keys(custom.mask)).toEqual(['zeta', 'a', 'mid']);
      expect(Object.keys((await tokensAs(t, revealer).get(`/tokens/${custom.id}`).expect(200)).body.mask)).toEqual(['zeta', 'a', 'mid']);
    });

    it('takes a caller-chosen id, unique in the tenant (409), and the same id in another tenant', async () => {
      const id = `tok_${Math.random().toString(36).slice(2)}`;
      await createToken(t, reader, { id, type: 'token', data: { a: 1 } });
      expectProblem(await tokensAs(t, reader).post('/tokens', { id, type: 'token', data: 'x' }), 409);
      const other = await newTenant(t);
      const otherKey = await privateApp(t, other, ['token:create', 'token:read']);
      expect((await tokensAs(t, otherKey).post('/tokens', { id, type: 'token', data: 'x' })).status).toBe(201);
      // Another tenant's token is a 404, never a 403.
      expectProblem(await tokensAs(t, otherKey).get(`/tokens/${(await createToken(t, reader, { type: 'token', data: 1 })).id}`), 404);
    });

    it('reads back exactly what was written, any JSON for `token`; a path id outside the id alphabet is a 400', async () => {
      const data = { nested: [1, { deep: true, s: 'ünïcödé ✓', n: null }], date: '2026-01-01T00:00:00.000Z', e: 1e21 };
      const created = await createToken(t, revealer, { type: 'token', data });
      expect(created.data).toEqual(data);
      expect((await tokensAs(t, revealer).get(`/tokens/${created.id}`).expect(200)).body.data).toEqual(data);
      expectProblem(await tokensAs(t, revealer).get('/tokens/has.dot'), 400, ['id']);
      expectProblem(await tokensAs(t, revealer).get(`/tokens/${'x'.repeat(401)}`), 400, ['id']);
      expectProblem(await tokensAs(t, revealer).get('/tokens/x?unknown=1'), 400, ['unknown']);
    });

    it('renders an alias id expression', async () => {
      const body = await createToken(t, revealer, { id: '{{ data | alias_preserve_format: 0, 4 }}', type: 'card_number', data: '4111111111111111' });
      expect(body.id).toMatch(/^[0-9]{12}1111$/);
      expect(body.data).toBe('4111111111111111');
    });

    it('refuses invalid data naming the field, never echoing the value', async () => {
      const cases: [object, string][] = [
        [{ type: 'card', data: { ...CARD, number: '4242424242424241' } }, 'data.number'],
        [{ type: 'card', data: { ...CARD, expiration_month: 13 } }, 'data.expiration_month'],
        [{ type: 'card', data: { ...CARD, cvc: '12a' } }, 'data.cvc'],
        [{ type: 'card', data: { ...CARD, pin: '1234' } }, 'data.pin'],
        [{ type: 'bank', data: { routing_number: '123456789', account_number: '1234567' } }, 'data.routing_number'],
        [{ type: 'social_security_number', data: '12-345-6789' }, 'data'],
        [{ type: 'employer_id_number', data: '123-456789' }, 'data'],
        [{ type: 'us_bank_routing_number', data: '011000016' }, 'data'],
        [{ type: 'us_bank_account_number', data: '12' }, 'data'],
        [{ type: 'card_number', data: 4242424242424242 }, 'data'],
        [{ type: 'nope', data: 'x' }, 'type'],
        [{ type: 'token', data: 'x', containers: ['pci'] }, 'containers[0]'],
        [{ type: 'token', data: 'x', metadata: { a: 1 } }, 'metadata.a'],
        [{ type: 'token', data: 'x', id: 'has space' }, 'id'],
        [{ type: 'token', data: 'x', mask: '{{ data | nope }}' }, 'mask'],
        [{ type: 'token', data: 'x', expires_at: '2001-01-01T00:00:00.000Z' }, 'expires_at'],
        [{ type: 'token', data: 'x', unknown: 1 }, 'unknown'],
        [{ type: 'token' }, 'data'],
      ];
      for (const [body, field] of cases) {
        const res = await tokensAs(t, reader).post('/tokens', body);
        expectProblem(res, 400, [field]);
        expect(JSON.stringify(res.body)).not.toMatch(/4242424242424241|12-345-6789|123-456789|011000016/);
      }
    });

    it('accepts valid values of every type', async () => {
      const valid: object[] = [
        { type: 'bank', data: { routing_number: '011000015', account_number: '000123456789' } },
        { type: 'social_security_number', data: '123-45-6789' },
        { type: 'employer_id_number', data: '12-3456789' },
        { type: 'us_bank_routing_number', data: '011000015' },
        { type: 'us_bank_account_number', data: '1234567890' },
        { type: 'card_number', data: '4242424242424242' },
        { type: 'token', data: { nested: [1, { deep: true }] } },
      ];
      const masks: unknown[] = [];
      for (const body of valid) masks.push((await createToken(t, reader, body)).data);
      expect(masks).toEqual([
        { routing_number: '011000015', account_number: 'XXXXXXXX6789' },
        'XXX-XX-6789',
        'XX-XXX6789',
        'XXXXX0015',
        'XXXXXX7890',
        'XXXXXXXXXXXX4242',
        undefined, // `token` has no default mask: a mask rule shows no data
      ]);
    });
  });

  describe('PATCH and DELETE', () => {
    it('merges data and metadata, re-renders the mask and fingerprint, and logs the update', async () => {
      const created = await createToken(t, revealer, { type: 'card', data: CARD, metadata: { a: '1', b: '2' } });
      // Read (and so cached) before the update: the update is seen by the next read all the same.
      expect((await tokensAs(t, reader).get(`/tokens/${created.id}`)).body.data.number).toBe('424242XXXXXX4242');
      const res = await tokensAs(t, revealer).patch(`/tokens/${created.id}`, { data: { number: '5555555555554444' }, metadata: { b: null, c: '3' } });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ ...CARD, number: '5555555555554444' });
      expect(res.body.metadata).toEqual({ a: '1', c: '3' });
      expect(res.body.fingerprint).not.toBe(created.fingerprint);
      expect(res.body.modified_at).toEqual(expect.any(String));
      const masked = await tokensAs(t, reader).get(`/tokens/${created.id}`);
      expect(masked.body.data.number).toBe('555555XXXXXX4444');
      expectProblem(await tokensAs(t, revealer).patch(`/tokens/${created.id}`, { data: { number: '1234' } }), 400, ['data.number']);
      expectProblem(await tokensAs(t, revealer).patch(`/tokens/${created.id}`, { type: 'token' }), 400, ['type']);
      const ops = (await auditEvents(t, { entityId: created.id })).map((e) => [e.entity_type, e.operation]);
      expect(ops).toEqual(
        expect.arrayContaining([
          ['card', 'create'],
          ['card', 'update'],
          ['card', 'read'],
        ]),
      );
    });

    it('deletes (204), then 404; another tenant cannot delete', async () => {
      const created = await createToken(t, reader, { type: 'token', data: 'bye' });
      // Read (and so cached) before the delete: the next read is a 404 all the same.
      expect((await tokensAs(t, reader).get(`/tokens/${created.id}`)).status).toBe(200);
      const other = await newTenant(t);
      const otherKey = await privateApp(t, other, ['token:delete', 'token:read']);
      expectProblem(await tokensAs(t, otherKey).delete(`/tokens/${created.id}`), 404);
      expect((await tokensAs(t, reader).delete(`/tokens/${created.id}`)).status).toBe(204);
      expectProblem(await tokensAs(t, reader).get(`/tokens/${created.id}`), 404);
      expectProblem(await tokensAs(t, reader).delete(`/tokens/${created.id}`), 404);
    });
  });

  describe('permissions', () => {
    it('refuses a key without the permission (403) and a management key (403)', async () => {
      const created = await createToken(t, reader, { type: 'token', data: 'x' });
      const createOnly = await publicApp(t, admin, ['token:create']);
      expectProblem(await tokensAs(t, createOnly).get(`/tokens/${created.id}`), 403);
      expectProblem(await tokensAs(t, admin.key).post('/tokens', { type: 'token', data: 'x' }), 403);
      expectProblem(await tokensAs(t, admin.key).get(`/tokens/${created.id}`), 403);
      // A public key's create answers without data (redact).
      const res = await tokensAs(t, createOnly).post('/tokens', { type: 'card', data: CARD });
      expect(res.status).toBe(201);
      expect(res.body).not.toHaveProperty('data');
    });

    it('lists the token permissions as enforced by the vault', async () => {
      const res = await tokensAs(t, admin.key).get('/permissions?application_type=private');
      const tokenPermissions = res.body.filter((p: { type: string }) => p.type.startsWith('token:')).map((p: { type: string }) => p.type);
      expect(tokenPermissions).toEqual(expect.arrayContaining(['token:create', 'token:read', 'token:update', 'token:delete', 'token:use']));
    });
  });
});
