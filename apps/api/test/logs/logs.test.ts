import { randomUUID } from 'node:crypto';
import { AuditEvent, CreatedTenant, LogChainWriter } from '@gatehouse/domain';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';

jest.setTimeout(60_000);

const BASE = Date.parse('2026-03-01T00:00:00.000Z');

/** Logs written straight through the repository (as the worker does), one a minute from BASE. */
async function seed(t: TestApp, tenantId: string, count: number, shape: (i: number) => Partial<AuditEvent> = () => ({})): Promise<AuditEvent[]> {
  const logs: AuditEvent[] = Array.from({ length: count }, (_, i) => ({
    id: randomUUID(),
    tenantId,
    actorId: i % 2 === 0 ? randomUUID() : null,
    actorType: i % 2 === 0 ? 'application' : 'system',
    entityType: ['token', 'card', 'application'][i % 3]!,
    entityId: `e${i % 5}`,
    operation: 'update',
    message: `change ${i}`,
    createdAt: new Date(BASE + i * 60_000),
    ...shape(i),
  }));
  await t.app.get(LogChainWriter).append(logs);
  return logs;
}

describe('GET /logs', () => {
  let t: TestApp;
  let tenant: CreatedTenant;
  let logs: AuditEvent[];

  beforeAll(async () => {
    t = await startTestApp();
    tenant = await t.tenant();
    logs = await seed(t, tenant.tenant.id, 45);
  });
  afterAll(() => t.close());

  const get = (query: string, key = tenant.key) => t.http().get(`/logs${query}`).set('SVC-API-KEY', key);
  // The tenant's own creation logs are in the outbox only (no worker here): only the seeded rows are listed.
  const newestFirst = () => [...logs].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());

  it('lists the tenant newest first in the paginated envelope, in the wire shape of spec 2.2', async () => {
    const res = await get('?size=10').expect(200);
    expect(res.body.pagination).toEqual({ total_items: 45, page_number: 1, page_size: 10, total_pages: 5, next: expect.any(String) });
    expect(res.body.data.map((l: { id: string }) => l.id)).toEqual(
      newestFirst()
        .slice(0, 10)
        .map((l) => l.id),
    );
    const newest = newestFirst()[0]!;
    expect(res.body.data[0]).toEqual({
      id: newest.id,
      tenant_id: tenant.tenant.id,
      ...(newest.actorId ? { actor_id: newest.actorId } : {}),
      actor_type: newest.actorType,
      entity_type: newest.entityType,
      entity_id: newest.entityId,
      operation: 'update',
      message: newest.message,
      created_at: newest.createdAt.toISOString(),
      // Written in order: the newest is the 45th of the tenant's chain.
      position: 45,
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const systemLog = res.body.data.find((l: { actor_type: string }) => l.actor_type === 'system');
    expect(systemLog).not.toHaveProperty('actor_id');
  });

  it('pages by offset to an empty page past the end', async () => {
    const page5 = await get('?size=10&page=5').expect(200);
    expect(page5.body.data).toHaveLength(5);
    expect(page5.body.pagination.next).toBeUndefined();
    const page6 = await get('?size=10&page=6').expect(200);
    expect(page6.body.data).toEqual([]);
  });

  it('walks every log exactly once with the start cursor, without counting', async () => {
    const seen: string[] = [];
    let start: string | undefined;
    do {
      const res = await get(`?size=7${start ? `&start=${start}` : ''}`).expect(200);
      if (start) expect(Object.keys(res.body.pagination).sort()).toEqual(res.body.pagination.next ? ['next', 'page_size'] : ['page_size']);
      seen.push(...res.body.data.map((l: { id: string }) => l.id));
      start = res.body.pagination.next;
    } while (start);
    expect(seen).toEqual(newestFirst().map((l) => l.id));
  });

  it('filters by entity type and id, and by a date range with start inclusive and end exclusive', async () => {
    const byType = await get('?entity_type=card&size=100').expect(200);
    expect(byType.body.pagination.total_items).toBe(15);
    expect(byType.body.data.every((l: { entity_type: string }) => l.entity_type === 'card')).toBe(true);

    const byEntity = await get('?entity_type=card&entity_id=e1&size=100').expect(200);
    expect(byEntity.body.data.map((l: { id: string }) => l.id)).toEqual(
      newestFirst()
        .filter((l) => l.entityType === 'card' && l.entityId === 'e1')
        .map((l) => l.id),
    );

    const start = logs[10]!.createdAt.toISOString();
    const end = logs[20]!.createdAt.toISOString();
    const range = await get(`?start_date=${start}&end_date=${end}&size=100`).expect(200);
    expect(range.body.data.map((l: { id: string }) => l.id)).toEqual(
      logs
        .slice(10, 20)
        .reverse()
        .map((l) => l.id),
    );
    const dayOnly = await get('?start_date=2026-03-01&end_date=2026-03-02&size=1').expect(200);
    expect(dayOnly.body.pagination.total_items).toBe(45);
  });

  it('keeps the filters on cursor pages', async () => {
    const first = await get('?entity_type=token&size=4').expect(200);
    const second = await get(`?entity_type=token&size=4&start=${first.body.pagination.next}`).expect(200);
    const tokens = newestFirst()
      .filter((l) => l.entityType === 'token')
      .map((l) => l.id);
    expect([...first.body.data, ...second.body.data].map((l: { id: string }) => l.id)).toEqual(tokens.slice(0, 8));
  });

  it('answers bad dates, bad paging, unknown entity types and bad cursors with 400 naming the parameter', async () => {
    const cases: [string, string][] = [
      ['?start_date=yesterday', 'start_date'],
      ['?end_date=2026-02-30T00:00:00Z', 'end_date'],
      ['?start_date=2026-03-02T00:00:00Z&end_date=2026-03-01T00:00:00Z', 'end_date'],
      ['?size=0', 'size'],
      ['?size=101', 'size'],
      ['?page=0', 'page'],
      ['?page=1.5', 'page'],
      ['?entity_type=spaceship', 'entity_type'],
      ['?start=not-a-cursor', 'start'],
      ['?tenant_id=x', 'tenant_id'],
    ];
    for (const [query, field] of cases) {
      const res = await get(query);
      expect([query, res.status]).toEqual([query, 400]);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(Object.keys(res.body.errors)).toEqual([field]);
    }
  });

  it("never shows another tenant's logs", async () => {
    const other = await t.tenant();
    const foreign = await seed(t, other.tenant.id, 3, () => ({ entityId: 'e1', entityType: 'card' }));
    const mine = await get('?entity_type=card&entity_id=e1&size=100').expect(200);
    const ids = mine.body.data.map((l: { id: string }) => l.id);
    for (const log of foreign) expect(ids).not.toContain(log.id);
    const theirs = await get('?size=100', other.key).expect(200);
    expect(theirs.body.data.map((l: { id: string }) => l.id).sort()).toEqual(foreign.map((l) => l.id).sort());
  });

  it('needs log:read: 401 without a key, 403 with a key lacking it', async () => {
    await t.http().get('/logs').expect(401);
    const res = await t
      .http()
      .post('/applications')
      .set('SVC-API-KEY', tenant.key)
      .send({ name: 'no logs', type: 'management', permissions: ['application:read'] })
      .expect(201);
    await get('', res.body.key).expect(403);
    await get('/entity-types', res.body.key).expect(403);
  });

  it('refuses to update or delete a log, whoever asks (append-only in the database)', async () => {
    await expect(t.database.dataSource.query("UPDATE logs SET message = 'rewritten' WHERE id = $1", [logs[0]!.id])).rejects.toThrow(/append-only/);
    await expect(t.database.dataSource.query('DELETE FROM logs WHERE id = $1', [logs[0]!.id])).rejects.toThrow(/append-only/);
  });
});

describe('GET /logs/entity-types', () => {
  let t: TestApp;
  beforeAll(async () => (t = await startTestApp()));
  afterAll(() => t.close());

  it('is a plain array of the catalogue', async () => {
    const { key } = await t.tenant();
    const res = await t.http().get('/logs/entity-types').set('SVC-API-KEY', key).expect(200);
    expect(res.body).toEqual(
      ['application', 'bank', 'card', 'proxy', 'reactor', 'tenant', 'token'].map((value) => ({
        display_name: value[0]!.toUpperCase() + value.slice(1),
        value,
      })),
    );
  });
});
