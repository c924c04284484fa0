import { createHash } from 'node:crypto';
import type { TestApp } from '@gatehouse/test-support/test-app';
import {
  ANY_UUID,
  appWithTenant,
  as,
  auditEvents,
  Caller,
  CONDITION_RULE,
  CONTAINER_RULE,
  createApplication,
  expectProblem,
  VALID,
} from '../support/application-fixtures';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const KEY = /^key_[0-9A-Za-z]{32,}$/;
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

describe('applications API', () => {
  let t: TestApp;
  let admin: Caller;
  beforeAll(async () => ({ t, admin } = await appWithTenant()), 60_000);
  afterAll(() => t.close());

  async function storedRow(id: string): Promise<Record<string, unknown>> {
    const [row] = await t.database.dataSource.query('SELECT * FROM applications WHERE id = $1', [id]);
    return row;
  }

  describe('POST /applications', () => {
    it('answers 201 with Location and the application, key included', async () => {
      const before = Date.now();
      const res = await as(t, admin.key)
        .post('/applications', { ...VALID.private, rules: [{ ...CONTAINER_RULE, description: 'cards' }], can_create_expiring_applications: true })
        .expect(201);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers.location).toBe(`/applications/${res.body.id}`);
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID),
        tenant_id: admin.tenantId,
        name: 'backend',
        key: expect.stringMatching(KEY),
        type: 'private',
        permissions: ['token:read', 'token:search'],
        rules: [{ description: 'cards', priority: 1, container: '/pci/high/', transform: 'reveal', permissions: ['token:read'] }],
        created_by: admin.applicationId,
        created_at: expect.stringMatching(ISO_MS),
        can_create_expiring_applications: true,
      });
      expect(Date.parse(res.body.created_at)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(res.body.created_at)).toBeLessThanOrEqual(Date.now() + 1000);
    });

    it.each(['private', 'public', 'management', 'expiring'] as const)('creates a %s application', async (type) => {
      const res = await as(t, admin.key).post('/applications', VALID[type]).expect(201);
      expect(res.body).toMatchObject({ type, name: VALID[type].name, permissions: [...VALID[type].permissions], rules: [] });
      expect(res.body.key).toMatch(KEY);
      if (type === 'expiring') expect(res.body.expires_at).toMatch(ISO_MS);
      else expect(res.body).not.toHaveProperty('expires_at');
    });

    it('creates an expiring application from rules with conditions', async () => {
      const res = await as(t, admin.key)
        .post('/applications', { name: 'e', type: 'expiring', rules: [CONDITION_RULE] })
        .expect(201);
      expect(res.body.rules).toEqual([CONDITION_RULE]);
      expect(res.body.permissions).toEqual([]);
    });

    it('answers a rule and its conditions as every read does, member order included (jsonb stores them reordered)', async () => {
      const created = await as(t, admin.key)
        .post('/applications', { name: 'e', type: 'expiring', rules: [CONDITION_RULE] })
        .expect(201);
      const read = await as(t, admin.key).get(`/applications/${created.body.id}`).expect(200);
      expect(JSON.stringify(read.body.rules)).toBe(JSON.stringify(created.body.rules));
      expect(Object.keys(read.body.rules[0].conditions[0])).toEqual(['attribute', 'operator', 'value']);
    });

    it('stores only the SHA-256 of the key, in no column the plaintext', async () => {
      const { id, key } = await createApplication(t, admin.key, VALID.private);
      const row = await storedRow(id);
      expect(row.key_hash).toBe(sha256(key));
      for (const [column, value] of Object.entries(row)) {
        expect([column, JSON.stringify(value)]).toEqual([column, expect.not.stringContaining(key.slice(4))]);
      }
      const [{ n }] = await t.database.dataSource.query(`SELECT count(*)::int AS n FROM applications a WHERE a::text LIKE '%' || $1 || '%'`, [key.slice(4)]);
      expect(n).toBe(0);
    });

    it('gives every application a different key', async () => {
      const keys = await Promise.all([1, 2, 3, 4, 5].map(() => createApplication(t, admin.key, VALID.public).then((a) => a.key)));
      expect(new Set(keys).size).toBe(5);
    });

    it('defaults expires_at to now + 1 minute', async () => {
      const before = Date.now();
      const res = await as(t, admin.key).post('/applications', VALID.expiring).expect(201);
      const expiresAt = Date.parse(res.body.expires_at);
      expect(expiresAt).toBeGreaterThanOrEqual(before + 60_000 - 1000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 60_000 + 1000);
    });

    it('keeps an explicit expires_at, to the millisecond', async () => {
      const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
      const res = await as(t, admin.key)
        .post('/applications', { ...VALID.expiring, expires_at: expiresAt })
        .expect(201);
      expect(res.body.expires_at).toBe(expiresAt);
    });

    it('treats an explicit null expires_at as the default', async () => {
      const res = await as(t, admin.key)
        .post('/applications', { ...VALID.expiring, expires_at: null })
        .expect(201);
      expect(Date.parse(res.body.expires_at) - Date.now()).toBeGreaterThan(50_000);
    });

    it('removes duplicate permissions', async () => {
      const res = await as(t, admin.key)
        .post('/applications', { ...VALID.private, permissions: ['token:read', 'token:read'] })
        .expect(201);
      expect(res.body.permissions).toEqual(['token:read']);
    });
  });

  describe('GET /applications/{id}', () => {
    it('answers 200 with the application, never its key', async () => {
      const created = await createApplication(t, admin.key, { ...VALID.private, rules: [CONTAINER_RULE] });
      const res = await as(t, admin.key).get(`/applications/${created.id}`).expect(200);
      const { key, ...withoutKey } = created.body;
      expect(key).toBeDefined();
      expect(res.body).toEqual(withoutKey);
      expect(res.body).not.toHaveProperty('key');
      expect(res.text).not.toContain(created.key);
    });

    it('accepts the id in upper case', async () => {
      const created = await createApplication(t, admin.key, VALID.public);
      const res = await as(t, admin.key).get(`/applications/${created.id.toUpperCase()}`).expect(200);
      expect(res.body.id).toBe(created.id);
    });

    it('is a 404 for an id that does not exist', async () => {
      expectProblem(await as(t, admin.key).get(`/applications/${ANY_UUID}`), 404);
    });
  });

  describe('GET /applications/key', () => {
    it('answers with the calling application, without its key', async () => {
      const res = await as(t, admin.key).get('/applications/key').expect(200);
      expect(res.body).toMatchObject({ id: admin.applicationId, tenant_id: admin.tenantId, type: 'management' });
      expect(res.body).not.toHaveProperty('key');
      expect(res.text).not.toContain(admin.key);
    });

    it('answers for whichever application calls', async () => {
      const other = await createApplication(t, admin.key, { ...VALID.management, permissions: ['application:read'] });
      const res = await as(t, other.key).get('/applications/key').expect(200);
      expect(res.body.id).toBe(other.id);
      expect(res.body.permissions).toEqual(['application:read']);
    });
  });

  describe('PUT /applications/{id}', () => {
    it('answers 200 with the replaced application, never a key, and stamps modified_by/at', async () => {
      const created = await createApplication(t, admin.key, { ...VALID.private, can_create_expiring_applications: true });
      const res = await as(t, admin.key)
        .put(`/applications/${created.id}`, { name: 'renamed', permissions: ['token:use'], rules: [CONTAINER_RULE] })
        .expect(200);
      expect(res.body).toEqual({
        id: created.id,
        tenant_id: admin.tenantId,
        name: 'renamed',
        type: 'private',
        permissions: ['token:use'],
        rules: [CONTAINER_RULE],
        created_by: admin.applicationId,
        created_at: created.body.created_at,
        modified_by: admin.applicationId,
        modified_at: expect.stringMatching(ISO_MS),
      });
      expect(res.text).not.toContain(created.key);
      expect((await as(t, admin.key).get(`/applications/${created.id}`).expect(200)).body).toEqual(res.body);
    });

    it('clears omitted optional fields (PUT replaces)', async () => {
      const created = await createApplication(t, admin.key, { ...VALID.private, rules: [CONTAINER_RULE], can_create_expiring_applications: true });
      const res = await as(t, admin.key)
        .put(`/applications/${created.id}`, { name: 'only perms', permissions: ['token:read'] })
        .expect(200);
      expect(res.body.rules).toEqual([]);
      expect(res.body).not.toHaveProperty('can_create_expiring_applications');
    });

    it('keeps the key working', async () => {
      const created = await createApplication(t, admin.key, VALID.management);
      await as(t, admin.key)
        .put(`/applications/${created.id}`, { name: 'x', permissions: ['application:read'] })
        .expect(200);
      await as(t, created.key).get('/applications/key').expect(200);
    });

    it('keeps expires_at of an expiring application', async () => {
      const created = await createApplication(t, admin.key, VALID.expiring);
      const res = await as(t, admin.key)
        .put(`/applications/${created.id}`, { name: 'x', rules: [CONDITION_RULE] })
        .expect(200);
      expect(res.body.expires_at).toBe(created.body.expires_at);
      expect(res.body.type).toBe('expiring');
    });
  });

  describe('POST /applications/{id}/regenerate', () => {
    it('answers 200 with the application and a new key', async () => {
      const created = await createApplication(t, admin.key, VALID.private);
      const res = await as(t, admin.key).post(`/applications/${created.id}/regenerate`).expect(200);
      expect(res.body.key).toMatch(KEY);
      expect(res.body.key).not.toBe(created.key);
      const { key: _old, ...rest } = created.body;
      expect(res.body).toEqual({ ...rest, key: res.body.key, modified_by: admin.applicationId, modified_at: expect.stringMatching(ISO_MS) });
      expect((await storedRow(created.id)).key_hash).toBe(sha256(res.body.key));
    });

    it('ignores an empty JSON body', async () => {
      const created = await createApplication(t, admin.key, VALID.private);
      await as(t, admin.key).post(`/applications/${created.id}/regenerate`, {}).expect(200);
    });
  });

  describe('DELETE /applications/{id}', () => {
    it('answers 204 with an empty body, and the application is gone', async () => {
      const created = await createApplication(t, admin.key, VALID.private);
      const res = await as(t, admin.key).delete(`/applications/${created.id}`).expect(204);
      expect(res.text).toBe('');
      expect(res.headers['content-length'] ?? '0').toBe('0');
      expectProblem(await as(t, admin.key).get(`/applications/${created.id}`), 404);
      expect(await storedRow(created.id)).toBeUndefined();
    });

    it('is a 404 the second time', async () => {
      const created = await createApplication(t, admin.key, VALID.private);
      await as(t, admin.key).delete(`/applications/${created.id}`).expect(204);
      expectProblem(await as(t, admin.key).delete(`/applications/${created.id}`), 404);
    });

    it('may delete the caller itself, whose key then stops working', async () => {
      const self = await createApplication(t, admin.key, { ...VALID.management, permissions: ['application:delete', 'application:read'] });
      await as(t, self.key).delete(`/applications/${self.id}`).expect(204);
      expectProblem(await as(t, self.key).get('/applications/key'), 401);
    });
  });

  describe('audit events', () => {
    it('records exactly one event for each create, update, regenerate and delete, by the caller', async () => {
      const caller = await createApplication(t, admin.key, {
        ...VALID.management,
        name: 'auditor',
        permissions: ['application:create', 'application:update', 'application:delete', 'application:read'],
      });
      const created = await createApplication(t, caller.key, { ...VALID.private, name: 'audited' });
      expect(await auditEvents(t, { entityId: created.id })).toHaveLength(1);

      await as(t, caller.key)
        .put(`/applications/${created.id}`, { name: 'audited 2', permissions: ['token:use'] })
        .expect(200);
      expect(await auditEvents(t, { entityId: created.id })).toHaveLength(2);

      const regenerated = await as(t, caller.key).post(`/applications/${created.id}/regenerate`).expect(200);
      expect(await auditEvents(t, { entityId: created.id })).toHaveLength(3);

      await as(t, caller.key).delete(`/applications/${created.id}`).expect(204);
      const events = await auditEvents(t, { entityId: created.id });
      expect(events.map((e) => [e.operation, e.entity_type, e.entity_id, e.actor_id, e.actor_type, e.tenant_id])).toEqual([
        ['create', 'application', created.id, caller.id, 'application', admin.tenantId],
        ['update', 'application', created.id, caller.id, 'application', admin.tenantId],
        ['update', 'application', created.id, caller.id, 'application', admin.tenantId],
        ['delete', 'application', created.id, caller.id, 'application', admin.tenantId],
      ]);
      expect(events[0]!.message).toContain('audited');
      expect(events[1]!.message).toContain('audited 2');
      expect(events[2]!.message).toBe('Application key regenerated');
      expect(events[3]!.message).toContain('deleted');
      for (const event of events) {
        expect(event.id).toMatch(UUID);
        expect(event.message).not.toContain(created.key);
        expect(event.message).not.toContain(regenerated.body.key);
        expect(event.message).not.toContain('key_');
      }
    });

    it('records nothing for reads', async () => {
      const created = await createApplication(t, admin.key, VALID.public);
      await as(t, admin.key).get(`/applications/${created.id}`).expect(200);
      await as(t, admin.key).get('/applications').expect(200);
      expect(await auditEvents(t, { entityId: created.id })).toHaveLength(1);
    });
  });
});
