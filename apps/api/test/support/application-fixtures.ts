import type { Response } from 'supertest';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';

/** A tenant's first management application, as the API's callers see it. */
export interface Caller {
  key: string;
  applicationId: string;
  tenantId: string;
}

export async function newTenant(t: TestApp): Promise<Caller> {
  const created = await t.tenant();
  return { key: created.key, applicationId: created.application.id, tenantId: created.tenant.id };
}

/** A started app with a new tenant in it, for a beforeAll: `({ t, admin } = await appWithTenant())`. */
export async function appWithTenant(): Promise<{ t: TestApp; admin: Caller }> {
  const t = await startTestApp();
  try {
    return { t, admin: await newTenant(t) };
  } catch (error) {
    await t.close();
    throw error;
  }
}

/** Requests carrying `key` as SVC-API-KEY. */
export function as(t: TestApp, key: string) {
  return {
    get: (path: string) => t.http().get(path).set('SVC-API-KEY', key),
    post: (path: string, body?: unknown) => {
      const req = t.http().post(path).set('SVC-API-KEY', key);
      return body === undefined ? req : req.send(body as object);
    },
    put: (path: string, body: unknown) =>
      t
        .http()
        .put(path)
        .set('SVC-API-KEY', key)
        .send(body as object),
    delete: (path: string) => t.http().delete(path).set('SVC-API-KEY', key),
  };
}

/** A valid create body of each type; tests change one thing at a time. */
export const VALID = {
  private: { name: 'backend', type: 'private', permissions: ['token:read', 'token:search'] },
  public: { name: 'browser', type: 'public', permissions: ['token:create'] },
  management: { name: 'admin', type: 'management', permissions: ['application:read'] },
  expiring: { name: 'reveal', type: 'expiring', permissions: ['token:read'] },
} as const;

export const CONTAINER_RULE = { priority: 1, container: '/pci/high/', transform: 'reveal', permissions: ['token:read'] };
export const CONDITION_RULE = {
  priority: 1,
  conditions: [{ attribute: 'id', operator: 'equals', value: 'tok_1' }],
  transform: 'mask',
  permissions: ['token:read'],
};

export interface CreatedApplication {
  id: string;
  key: string;
  body: Record<string, unknown>;
}

/** Creates an application through the API (201 asserted). */
export async function createApplication(t: TestApp, callerKey: string, body: object): Promise<CreatedApplication> {
  const res = await as(t, callerKey).post('/applications', body);
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id, key: res.body.key, body: res.body };
}

/** A management application holding exactly `permissions` (which may leave out what an endpoint needs). */
export async function managementWith(t: TestApp, admin: Caller, permissions: string[]): Promise<CreatedApplication> {
  return createApplication(t, admin.key, { name: `holds ${permissions.join(' ') || 'nothing'}`, type: 'management', permissions });
}

export const ANY_UUID = '7d0f4a8e-1c2b-4d3e-9f60-123456789abc';

/** Every error is RFC 7807 with a status matching the response; validation errors name their fields. */
export function expectProblem(res: Response, status: number, fields?: string[]): void {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body ?? res.text)}`);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: expect.any(String), title: expect.any(String), status });
  expect(res.body.instance).toBe(res.headers['x-request-id']);
  const text = JSON.stringify(res.body);
  expect(text).not.toMatch(/\bat .+\.(ts|js):\d+/); // no stack frames
  expect(text).not.toMatch(/\b(SELECT|INSERT|UPDATE|DELETE)\b .*\b(FROM|INTO|SET)\b/); // no SQL
  if (fields) {
    expect(res.body.errors).toBeDefined();
    for (const field of fields) {
      expect(Object.keys(res.body.errors)).toContain(field);
      expect(res.body.errors[field]).toEqual(expect.arrayContaining([expect.any(String)]));
    }
  }
}

/** Rows a tenant owns, to show that a refused request wrote nothing. */
export async function rowCounts(t: TestApp, tenantId: string): Promise<{ applications: number; proxies: number; tokens: number; events: number }> {
  const [row] = await t.database.dataSource.query(
    `SELECT (SELECT count(*)::int FROM applications WHERE tenant_id = $1) AS applications,
            (SELECT count(*)::int FROM proxies WHERE tenant_id = $1) AS proxies,
            (SELECT count(*)::int FROM tokens WHERE tenant_id = $1) AS tokens,
            (SELECT count(*)::int FROM (SELECT id FROM audit_outbox WHERE tenant_id = $1 UNION SELECT id FROM logs WHERE tenant_id = $1) AS e) AS events`,
    [tenantId],
  );
  return { applications: row.applications, proxies: row.proxies, tokens: row.tokens, events: row.events };
}

export interface AuditRow {
  id: string;
  tenant_id: string;
  actor_id: string | null;
  actor_type: string;
  entity_type: string;
  entity_id: string;
  operation: string;
  message: string;
  created_at: Date;
}

/**
 * Audit events of an entity or a tenant, wherever they are: still in `audit_outbox`, or already relayed to
 * `logs` by the log pipeline (the outbox row id is the log id, so the union by id counts each event once).
 */
export async function auditEvents(t: TestApp, where: { entityId?: string; tenantId?: string }): Promise<AuditRow[]> {
  const column = where.entityId ? 'entity_id' : 'tenant_id';
  const value = where.entityId ?? where.tenantId;
  const columns = 'id, tenant_id, actor_id, actor_type, entity_type, entity_id, operation, message, created_at';
  // Global setup runs every migration, so the logs table is always there.
  return t.database.dataSource.query(
    `SELECT ${columns} FROM audit_outbox WHERE ${column} = $1
     UNION SELECT ${columns} FROM logs WHERE ${column} = $1 ORDER BY created_at, id`,
    [value],
  );
}

/**
 * The API with proxies allowed to a loopback upstream answering `{}` (and calling `onRequest`), one sandbox process:
 * what the escalation tests bind and invoke proxies against. `close` stops both.
 */
export async function appWithUpstream(onRequest: () => void = () => {}): Promise<{ t: TestApp; upstream: Upstream; close: () => Promise<void> }> {
  const upstream = await startUpstream((req, res) => {
    onRequest();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
  const t = await startTestApp({ PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8', REACTOR_POOL_SIZE: '1' });
  return { t, upstream, close: async () => (await t.close(), await upstream.stop()) };
}

/**
 * Issue 22 section 3's attack on a limit: a key limited to 5 per 600 s that may update itself PUTs itself to 5/601,
 * 5/602... between bursts, as if each policy were a new bucket. Answers how many of its requests (PUTs included)
 * were served.
 */
export async function selfRelimitAttack(t: TestApp, admin: Caller): Promise<number> {
  const body = { name: 'self', permissions: ['application:read', 'application:update'] };
  const app = await createApplication(t, admin.key, { ...body, type: 'management', rate_limit: { limit: 5, window_seconds: 600 } });
  let served = 0;
  for (let window = 601; window <= 610; window++) {
    const put = await as(t, app.key).put(`/applications/${app.id}`, { ...body, rate_limit: { limit: 5, window_seconds: window } });
    const gets = await Promise.all(Array.from({ length: 5 }, () => as(t, app.key).get('/applications/key')));
    served += [put, ...gets].filter((res) => res.status === 200).length;
  }
  return served;
}

/** appWithUpstream for the describe block it is called in: started before its tests, stopped after them. */
export function appWithUpstreamForBlock(): { readonly t: TestApp; readonly upstream: Upstream } {
  const started: { t?: TestApp; upstream?: Upstream; close?: () => Promise<void> } = {};
  beforeAll(async () => void Object.assign(started, await appWithUpstream()), 60_000);
  afterAll(() => started.close?.());
  return {
    get t() {
      return started.t!;
    },
    get upstream() {
      return started.upstream!;
    },
  };
}
