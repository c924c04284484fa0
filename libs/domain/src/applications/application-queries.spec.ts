import { withTenant } from '../testing/tenant-spec-fixture';
import { NotFoundError } from '../shared/domain-error';
import { decodeCursor } from '../shared/page';
import { CreateTenant } from '../tenants/tenant-commands';
import { GetApplication, ListApplications } from './application-queries';
import { principalOf } from './principal';

const setup = () => withTenant();

describe('GetApplication', () => {
  it("finds the tenant's own application and nobody else's", async () => {
    const s = await setup();
    const other = principalOf((await new CreateTenant(s.uow, s.clock).execute('other')).application);
    const get = new GetApplication(s.applications);
    expect((await get.execute(s.admin, s.admin.applicationId)).id).toBe(s.admin.applicationId);
    await expect(get.execute(other, s.admin.applicationId)).rejects.toBeInstanceOf(NotFoundError);
    await expect(get.execute(s.admin, '00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('ListApplications', () => {
  it('lists the tenant newest first, with filters and both paging modes', async () => {
    const s = await setup();
    await new CreateTenant(s.uow, s.clock).execute('other');
    const ids = [s.admin.applicationId];
    for (let i = 0; i < 4; i++) {
      s.clock.advance(1000);
      ids.push((await s.create.execute(s.admin, { name: `a${i}`, type: i % 2 ? 'public' : 'private', permissions: ['token:create'] })).application.id);
    }
    const list = new ListApplications(s.applications);
    const all = await list.execute(s.admin, {}, { page: 1, size: 20 });
    expect(all.items.map((a) => a.id)).toEqual([...ids].reverse());
    expect(all.totalItems).toBe(5);
    expect(all.next).toBeUndefined();

    const first = await list.execute(s.admin, {}, { page: 1, size: 2 });
    expect(first.items.map((a) => a.id)).toEqual([ids[4], ids[3]]);
    expect(decodeCursor(first.next!).id).toBe(ids[3]);
    const second = await list.execute(s.admin, {}, { page: 1, size: 2, start: first.next });
    expect(second.items.map((a) => a.id)).toEqual([ids[2], ids[1]]);
    const third = await list.execute(s.admin, {}, { page: 1, size: 2, start: second.next });
    expect(third.items.map((a) => a.id)).toEqual([ids[0]]);
    expect(third.next).toBeUndefined();

    expect((await list.execute(s.admin, { types: ['public'] }, { page: 1, size: 20 })).items.map((a) => a.id)).toEqual([ids[4], ids[2]]);
    expect((await list.execute(s.admin, { ids: [ids[1]!, ids[3]!] }, { page: 1, size: 20 })).totalItems).toBe(2);
  });
});
