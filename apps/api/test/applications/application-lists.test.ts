import type { TestApp } from '@gatehouse/test-support/test-app';
import { appWithTenant, as, Caller, createApplication, expectProblem, newTenant, VALID } from '../support/application-fixtures';

interface Listed {
  id: string;
  type: string;
  created_at: string;
  key?: string;
}

describe('GET /applications (lists)', () => {
  let t: TestApp;
  let admin: Caller;
  /** Every application of the tenant, newest first, as the list must order them. */
  let all: Listed[];
  let keys: string[];

  beforeAll(async () => {
    ({ t, admin } = await appWithTenant());
    keys = [admin.key];
    const types = ['private', 'public', 'expiring', 'management'] as const;
    for (let i = 0; i < 24; i++) keys.push((await createApplication(t, admin.key, { ...VALID[types[i % 4]!], name: `app ${i}` })).key);
    // Another tenant's applications must never appear.
    const other = await newTenant(t);
    for (let i = 0; i < 3; i++) await createApplication(t, other.key, VALID.public);
    const res = await as(t, admin.key).get('/applications?size=100').expect(200);
    all = withoutLastUse(res.body);
  }, 60_000);
  afterAll(() => t.close());

  const get = (query: string) => as(t, admin.key).get(`/applications${query}`);
  /**
   * A page's data without `last_used_at`: every request here uses the admin key, whose last use is written
   * asynchronously (once a minute), so it may appear or move between two lists.
   */
  function withoutLastUse(body: { data: Array<Listed & { last_used_at?: string }> }): Listed[] {
    return body.data.map(({ last_used_at: _lastUse, ...rest }) => rest);
  }
  const page = (body: { pagination: unknown; data: Listed[] }) => ({ pagination: body.pagination, data: withoutLastUse(body) });
  const ids = (data: Listed[]) => data.map((a) => a.id);

  it('holds the 25 applications of the tenant, newest first, never a key', () => {
    expect(all).toHaveLength(25);
    expect(all.at(-1)!.id).toBe(admin.applicationId);
    for (let i = 1; i < all.length; i++) {
      const [prev, cur] = [all[i - 1]!, all[i]!];
      expect(Date.parse(prev.created_at)).toBeGreaterThanOrEqual(Date.parse(cur.created_at));
      if (prev.created_at === cur.created_at) expect(prev.id > cur.id).toBe(true);
    }
    for (const app of all) expect(app).not.toHaveProperty('key');
    const text = JSON.stringify(all);
    for (const key of keys) expect(text).not.toContain(key);
  });

  it('defaults to page 1 of size 20 with the full envelope and a next cursor', async () => {
    const res = await get('').expect(200);
    expect(page(res.body)).toEqual({
      pagination: { total_items: 25, page_number: 1, page_size: 20, total_pages: 2, next: expect.any(String) },
      data: all.slice(0, 20),
    });
  });

  it('has no next on the last page', async () => {
    const res = await get('?page=2').expect(200);
    expect(page(res.body)).toEqual({ pagination: { total_items: 25, page_number: 2, page_size: 20, total_pages: 2 }, data: all.slice(20) });
  });

  it('has no next when the last page is exactly full', async () => {
    const res = await get('?page=5&size=5').expect(200);
    expect(res.body.pagination).toEqual({ total_items: 25, page_number: 5, page_size: 5, total_pages: 5 });
    expect(ids(res.body.data)).toEqual(ids(all.slice(20)));
  });

  it('answers 200 with empty data beyond the last page', async () => {
    const res = await get('?page=3').expect(200);
    expect(res.body).toEqual({ pagination: { total_items: 25, page_number: 3, page_size: 20, total_pages: 2 }, data: [] });
  });

  it.each(['1000000', '9007199254740991', '000000000000000000000000000000000000000000003'])(
    'answers page=%s, however far beyond the last page, with 200 and empty data',
    async (page) => {
      const res = await get(`?page=${page}`).expect(200);
      expect(res.body.data).toEqual([]);
      expect(res.body.pagination).toMatchObject({ total_items: 25, page_size: 20, total_pages: 2 });
      expect(res.body.pagination.next).toBeUndefined();
    },
  );

  // Plain decimal digits only, and no more than a JavaScript number holds exactly (strict input, issue 9).
  it.each(['99999999999999999999', '9007199254740992', '1e20', '1e308', '0x10'])('refuses page=%s with a 400 naming page', async (page) => {
    expectProblem(await get(`?page=${page}`), 400, ['page']);
  });

  it('takes size 1 and size 100', async () => {
    const one = await get('?size=1').expect(200);
    expect(one.body.pagination).toMatchObject({ page_size: 1, total_pages: 25 });
    expect(ids(one.body.data)).toEqual([all[0]!.id]);
    expect((await get('?size=100').expect(200)).body.pagination).toEqual({ total_items: 25, page_number: 1, page_size: 100, total_pages: 1 });
  });

  it('returns the following page for next passed as start, carrying only next and page_size', async () => {
    const first = await get('?size=10').expect(200);
    const second = await get(`?size=10&start=${first.body.pagination.next}`).expect(200);
    expect(page(second.body)).toEqual({ pagination: { page_size: 10, next: expect.any(String) }, data: all.slice(10, 20) });
    const third = await get(`?size=10&start=${second.body.pagination.next}`).expect(200);
    expect(page(third.body)).toEqual({ pagination: { page_size: 10 }, data: all.slice(20) });
  });

  it('walks every application once with the cursor, for several sizes', async () => {
    for (const size of [1, 3, 7, 25, 30]) {
      const seen: string[] = [];
      let res = await get(`?size=${size}`).expect(200);
      seen.push(...ids(res.body.data));
      for (let guard = 0; res.body.pagination.next && guard < 30; guard++) {
        res = await get(`?size=${size}&start=${encodeURIComponent(res.body.pagination.next)}`).expect(200);
        seen.push(...ids(res.body.data));
      }
      expect(res.body.pagination.next).toBeUndefined();
      expect(seen).toEqual(ids(all));
    }
  });

  it('filters by repeated id, keeping the order', async () => {
    const wanted = [all[3]!.id, all[0]!.id, all[17]!.id];
    const res = await get(`?${wanted.map((id) => `id=${id}`).join('&')}`).expect(200);
    expect(ids(res.body.data)).toEqual([all[0]!.id, all[3]!.id, all[17]!.id]);
    expect(res.body.pagination).toEqual({ total_items: 3, page_number: 1, page_size: 20, total_pages: 1 });
  });

  it('filters by a single id, in either case', async () => {
    const res = await get(`?id=${all[5]!.id}`).expect(200);
    expect(ids(res.body.data)).toEqual([all[5]!.id]);
    expect(ids((await get(`?id=${all[5]!.id.toUpperCase()}`).expect(200)).body.data)).toEqual([all[5]!.id]);
  });

  it('is a 400 for more than 100 ids', async () => {
    const query = Array.from({ length: 101 }, () => `id=${all[0]!.id}`).join('&');
    expectProblem(await get(`?${query}`), 400, ['id']);
  });

  it('filters by type, single and repeated, and with ids', async () => {
    const pub = await get('?type=public').expect(200);
    expect(ids(pub.body.data)).toEqual(ids(all.filter((a) => a.type === 'public')));
    expect(pub.body.pagination.total_items).toBe(6);

    const two = await get('?type=public&type=management&size=100').expect(200);
    expect(ids(two.body.data)).toEqual(ids(all.filter((a) => a.type === 'public' || a.type === 'management')));

    const notPrivate = all.find((a) => a.type !== 'private')!;
    const aPrivate = all.find((a) => a.type === 'private')!;
    const mixed = await get(`?type=private&id=${notPrivate.id}&id=${aPrivate.id}`).expect(200);
    expect(ids(mixed.body.data)).toEqual([aPrivate.id]);
  });

  it('keeps the filter along the cursor', async () => {
    const first = await get('?type=expiring&size=4').expect(200);
    const second = await get(`?type=expiring&size=4&start=${first.body.pagination.next}`).expect(200);
    expect([...ids(first.body.data), ...ids(second.body.data)]).toEqual(ids(all.filter((a) => a.type === 'expiring')));
    expect(second.body.pagination.next).toBeUndefined();
  });

  it.each([
    ['page=0', 'page'],
    ['page=-1', 'page'],
    ['page=1.5', 'page'],
    ['page=abc', 'page'],
    ['page=', 'page'],
    ['page=1&page=2', 'page'],
    ['size=0', 'size'],
    ['size=101', 'size'],
    ['size=abc', 'size'],
    ['size=-5', 'size'],
    ['size=2.5', 'size'],
    ['size=10&size=20', 'size'],
    ['start=not-a-cursor', 'start'],
    ['start=', 'start'],
    [`start=${Buffer.from('2026-01-01T00:00:00.000Z|nope').toString('base64url')}`, 'start'],
    [`start=${'A'.repeat(600)}`, 'start'],
    // A real date and UUID, but a year PostgreSQL cannot represent: still the request's fault.
    [`start=${Buffer.from('-100000-01-01T00:00:00.000Z|7d0f4a8e-1c2b-4d3e-9f60-123456789abc').toString('base64url')}`, 'start'],
    ['id=not-a-uuid', 'id'],
    ['id=7d0f4a8e-1c2b-4d3e-9f60-123456789abc&id=x', 'id'],
    ['type=superuser', 'type'],
    ['type=private&type=nope', 'type'],
    ['name=x', 'name'],
  ])('is a 400 naming the parameter for ?%s', async (query, field) => {
    expectProblem(await get(`?${query}`), 400, [field]);
  });
});
