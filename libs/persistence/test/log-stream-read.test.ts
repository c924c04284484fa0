import { randomUUID } from 'node:crypto';
import { VaultCrypto } from '@gatehouse/domain';
import { Database, openDatabase, TypeormLogStreamRepository } from '@gatehouse/persistence';
import { TEST_DATABASE_URL } from '@gatehouse/test-support/test-env';

// The streams' read of a tenant's trail (TypeormLogStreamRepository.readAfter) against real PostgreSQL: the next
// positions as a bounded range, and past a prefix that retention removed (the range then finds nothing).

describe('TypeormLogStreamRepository.readAfter on PostgreSQL', () => {
  let database: Database;
  let repo: TypeormLogStreamRepository;

  beforeAll(async () => {
    database = await openDatabase({ url: TEST_DATABASE_URL, dataDir: '', poolSize: 2 });
    repo = new TypeormLogStreamRepository(database.dataSource.manager, {} as VaultCrypto);
  });
  afterAll(() => database?.close());

  /** Logs of a new tenant at `positions` (inserted as they are: the read does not check the chain). */
  async function tenantWith(positions: number[]): Promise<string> {
    const tenantId = randomUUID();
    for (const seq of positions) {
      await database.dataSource.query(
        `INSERT INTO logs (id, tenant_id, actor_type, entity_type, entity_id, operation, message, created_at, seq, hash)
         VALUES ($1, $2, 'system', 'token', 'tok', 'read', $3, now(), $4, sha256(convert_to($3, 'UTF8')))`,
        [randomUUID(), tenantId, `log ${seq}`, seq],
      );
    }
    return tenantId;
  }

  const positions = async (tenantId: string, after: number, limit: number) => (await repo.readAfter(tenantId, after, limit)).map((l) => l.position);

  it('reads the next positions in chain order, at most `limit`', async () => {
    const tenantId = await tenantWith([1, 2, 3, 4, 5, 6, 7]);
    expect(await positions(tenantId, 0, 3)).toEqual([1, 2, 3]);
    expect(await positions(tenantId, 3, 3)).toEqual([4, 5, 6]);
    expect(await positions(tenantId, 6, 3)).toEqual([7]);
    expect(await positions(tenantId, 7, 3)).toEqual([]);
    const [log] = await repo.readAfter(tenantId, 2, 1);
    expect(log).toMatchObject({ tenantId, position: 3, message: 'log 3', hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('a stream behind logs that retention removed goes on from the first one kept', async () => {
    const tenantId = await tenantWith([51, 52, 53, 54]);
    expect(await positions(tenantId, 0, 10)).toEqual([51, 52, 53, 54]);
    expect(await positions(tenantId, 10, 3)).toEqual([51, 52, 53]);
    // The range reaches into what was kept: the part of it that is there.
    expect(await positions(tenantId, 45, 7)).toEqual([51, 52]);
    expect(await positions(tenantId, 52, 7)).toEqual([53, 54]);
  });
});
