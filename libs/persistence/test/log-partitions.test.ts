import { randomUUID } from 'node:crypto';
import { AuditEvent, Clock, encodeCursor, MaintainLogPartitions } from '@gatehouse/domain';
import { applyKeysetPage, LogEntity, MIGRATIONS, TypeormLogChainWriter, TypeormLogPartitions, TypeormLogRepository } from '@gatehouse/persistence';
import { ownDatabase, OwnDatabase } from '@gatehouse/test-support/own-database';
import { aSystemEvent } from '@gatehouse/domain/testing';

// The logs' time partitions (docs/audit-trail.md, "Time partitions") on a database of this suite's own: it drops
// partitions and converts the table back and forth, which no other suite may see.

const LogPartitions1764400000000 = MIGRATIONS.find((m) => m.name === 'LogPartitions1764400000000')!;

function aLog(tenantId: string, createdAt: string, over: Partial<AuditEvent> = {}): AuditEvent {
  return aSystemEvent(tenantId, { message: `read at ${createdAt}`, createdAt: new Date(createdAt), ...over });
}

class FixedClock extends Clock {
  constructor(public at: Date) {
    super();
  }
  now(): Date {
    return this.at;
  }
}

describe('time partitions of the logs', () => {
  let own: OwnDatabase;
  const query = <T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> => own.database.dataSource.query(sql, params);

  beforeAll(async () => (own = await ownDatabase('partitions')), 120_000);
  afterAll(() => own?.drop());

  /** The partition each of the tenant's logs is stored in, in chain order, and whether the chain verifies. */
  async function chainOf(tenantId: string): Promise<{ partitions: string[]; valid: boolean }> {
    const rows = await query<{ part: string; position: string; ok: boolean }>(
      `SELECT tableoid::regclass::text AS part, seq::text AS position, hash = log_chain(tenant_id, seq, id, created_at, actor_type, actor_id,
         entity_type, entity_id, operation, message, request_id, source_ip, user_agent) OVER (ORDER BY seq) AS ok
       FROM logs WHERE tenant_id = $1 ORDER BY seq`,
      [tenantId],
    );
    const [head] = await query<{ seq: string }>(`SELECT seq::text FROM log_chains WHERE tenant_id = $1`, [tenantId]);
    return {
      partitions: rows.map((r) => r.part),
      valid: rows.every((r, i) => r.ok && Number(r.position) === i + 1) && Number(head?.seq ?? 0) === rows.length,
    };
  }

  const partitionsOf = async () => new TypeormLogPartitions(own.database.dataSource.manager).list();

  it('has no default partition: the table converted by the migration, then one partition per month from its bound', async () => {
    const partitions = await partitionsOf();
    expect(partitions[0]).toMatchObject({ name: 'logs_legacy', from: null });
    const bound = partitions[0]!.to;
    expect(bound.getUTCDate()).toBe(1);
    expect(bound.getTime()).toBeGreaterThan(Date.now());
    // Two months after the bound exist already; each partition starts where the one before ends.
    expect(partitions.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < partitions.length; i++) expect(partitions[i]!.from).toEqual(partitions[i - 1]!.to);
    const [{ n }] = await query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_partitioned_table p WHERE p.partrelid = 'logs'::regclass AND p.partdefid <> 0`,
    );
    expect(n).toBe(0);
  });

  it('writes the logs either side of a month boundary into their own months, and reads them back in order across it', async () => {
    const tenant = randomUUID();
    const repo = new TypeormLogRepository(own.database.dataSource.manager);
    const writer = new TypeormLogChainWriter(own.database.dataSource.manager);
    const logs = ['2031-01-31T23:59:59.999Z', '2031-02-01T00:00:00.000Z', '2031-01-31T23:59:59.998Z', '2031-02-01T00:00:00.001Z'].map((at) => aLog(tenant, at));
    // No partition of 2031 exists: the writer creates those it needs (the worker down for years, say), and no other.
    expect((await partitionsOf()).some((p) => p.name.startsWith('logs_p2031'))).toBe(false);
    expect(await writer.append(logs.slice(0, 2))).toBe(2);
    expect(await writer.append(logs.slice(2))).toBe(2);
    expect((await partitionsOf()).filter((p) => p.name.startsWith('logs_p2031')).map((p) => p.name)).toEqual(['logs_p20310101', 'logs_p20310201']);
    expect(await chainOf(tenant)).toEqual({ partitions: ['logs_p20310101', 'logs_p20310201', 'logs_p20310101', 'logs_p20310201'], valid: true });

    // Newest first across the boundary, one log a page (keyset cursor), and a date range ending at the boundary.
    const seen: string[] = [];
    let start: string | undefined;
    do {
      const page = await repo.list(tenant, {}, { page: 1, size: 1, ...(start === undefined ? {} : { start }) });
      seen.push(...page.items.map((l) => l.createdAt.toISOString()));
      start = page.next;
    } while (start !== undefined);
    expect(seen).toEqual(['2031-02-01T00:00:00.001Z', '2031-02-01T00:00:00.000Z', '2031-01-31T23:59:59.999Z', '2031-01-31T23:59:59.998Z']);
    const january = await repo.list(tenant, { endDate: new Date('2031-02-01T00:00:00Z') }, { page: 1, size: 10 });
    expect(january.items.map((l) => l.createdAt.toISOString())).toEqual(['2031-01-31T23:59:59.999Z', '2031-01-31T23:59:59.998Z']);
    // The same id again, even in another month, is still one log (its id is claimed in log_ids).
    expect(await writer.append([{ ...logs[0]!, createdAt: new Date('2031-03-05T00:00:00Z') }])).toBe(0);
    expect((await chainOf(tenant)).partitions).toHaveLength(4);
    // The one-statement path (heads known to this writer) into a month without a partition: refused, created, written.
    expect(await writer.append([aLog(tenant, '2031-04-30T12:00:00Z')])).toBe(1);
    expect(await chainOf(tenant)).toEqual({ partitions: [...(await chainOf(tenant)).partitions.slice(0, 4), 'logs_p20310401'], valid: true });
  });

  it('plans a keyset page with only the partitions at or before its cursor (a deep page skips the newer months)', async () => {
    const tenant = randomUUID();
    const writer = new TypeormLogChainWriter(own.database.dataSource.manager);
    const logs = ['2033-01-15T00:00:00Z', '2033-02-15T00:00:00Z', '2033-03-15T00:00:00Z'].map((at) => aLog(tenant, at));
    expect(await writer.append(logs)).toBe(3);
    const start = encodeCursor({ createdAt: logs[1]!.createdAt, id: logs[1]!.id });
    const page = applyKeysetPage(
      own.database.dataSource.manager.getRepository(LogEntity).createQueryBuilder('l').select('l.id', 'id').where('l.tenant_id = :tenant', { tenant }),
      'l',
      { page: 1, size: 10, start },
    );
    expect(await page.getRawMany()).toEqual([{ id: logs[0]!.id }]);
    const [sql, params] = page.getQueryAndParameters();
    const plan = (await query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params)).map((r) => r['QUERY PLAN']).join('\n');
    expect(plan).toContain('logs_p20330101');
    expect(plan).toContain('logs_p20330201');
    expect(plan).not.toContain('logs_p20330301');
  });

  it('relays outbox events of a month without a partition once it exists, losing none (the worker down for a month)', async () => {
    const tenant = randomUUID();
    const ids = [randomUUID(), randomUUID()];
    for (const [i, id] of ids.entries()) {
      await query(
        `INSERT INTO audit_outbox (id, tenant_id, actor_type, entity_type, entity_id, operation, message, created_at)
         VALUES ($1, $2, 'system', 'token', 'tok_1', 'read', 'relayed', $3)`,
        [id, tenant, i === 0 ? '2032-06-30T23:59:59.999Z' : '2032-07-01T00:00:00Z'],
      );
    }
    const writer = new TypeormLogChainWriter(own.database.dataSource.manager);
    expect(await writer.relayOutbox(new Date('2100-01-01T00:00:00Z'), 100)).toBeGreaterThanOrEqual(2);
    expect(await chainOf(tenant)).toEqual({ partitions: ['logs_p20320601', 'logs_p20320701'], valid: true });
    expect(await query(`SELECT id FROM audit_outbox WHERE tenant_id = $1`, [tenant])).toEqual([]);
  });

  it("creates the current and the next partitions ahead in the worker's unit, and clips a new unit to its neighbours", async () => {
    const partitions = new TypeormLogPartitions(own.database.dataSource.manager);
    const clock = new FixedClock(new Date('2040-03-20T10:00:00Z'));
    expect(await new MaintainLogPartitions(partitions, clock, 'month').execute()).toBe(4);
    expect(await new MaintainLogPartitions(partitions, clock, 'month').execute()).toBe(0);
    const in2040 = async () =>
      (await partitions.list()).filter((p) => p.name.startsWith('logs_p2040')).map((p) => [p.name, p.from?.toISOString(), p.to.toISOString()]);
    expect(await in2040()).toEqual([
      ['logs_p20400301', '2040-03-01T00:00:00.000Z', '2040-04-01T00:00:00.000Z'],
      ['logs_p20400401', '2040-04-01T00:00:00.000Z', '2040-05-01T00:00:00.000Z'],
      ['logs_p20400501', '2040-05-01T00:00:00.000Z', '2040-06-01T00:00:00.000Z'],
      ['logs_p20400601', '2040-06-01T00:00:00.000Z', '2040-07-01T00:00:00.000Z'],
    ]);
    // Weekly from then on: the week of 2040-06-25 (a Monday) is cut at July's first day, where June's partition ends;
    // a writer creating one on demand cuts weeks too.
    clock.at = new Date('2040-07-01T12:00:00Z');
    try {
      await new MaintainLogPartitions(partitions, clock, 'week').execute();
      await new TypeormLogChainWriter(own.database.dataSource.manager).append([aLog(randomUUID(), '2040-08-08T08:00:00Z')]);
      const july = (await in2040()).slice(4);
      expect(july.slice(0, 3)).toEqual([
        ['logs_p20400701', '2040-07-01T00:00:00.000Z', '2040-07-02T00:00:00.000Z'],
        ['logs_p20400702', '2040-07-02T00:00:00.000Z', '2040-07-09T00:00:00.000Z'],
        ['logs_p20400709', '2040-07-09T00:00:00.000Z', '2040-07-16T00:00:00.000Z'],
      ]);
      expect(july).toContainEqual(['logs_p20400806', '2040-08-06T00:00:00.000Z', '2040-08-13T00:00:00.000Z']);
    } finally {
      await partitions.ensure(clock.at, clock.at, 'month');
    }
    await expect(query(`SELECT log_partitions_ensure(now(), now(), 'year')`)).rejects.toThrow(/a day, a week or a month, not year/);
  });

  it('gives up dropping behind a long reader of the logs (nothing dropped), instead of holding the writers behind it', async () => {
    const partitions = new TypeormLogPartitions(own.database.dataSource.manager);
    const before = (await partitions.list()).map((p) => p.name);
    const reader = own.database.dataSource.createQueryRunner();
    await reader.connect();
    try {
      await reader.startTransaction();
      await reader.query('SELECT 1 FROM logs LIMIT 1'); // ACCESS SHARE on logs and its partitions until the end
      await expect(partitions.dropBefore(new Date('2031-02-01T00:00:00Z'))).rejects.toMatchObject({ code: '55P03' });
    } finally {
      await reader.rollbackTransaction();
      await reader.release();
    }
    expect((await partitions.list()).map((p) => p.name)).toEqual(before);
  }, 30_000);

  it('drops the partitions older than a date with their ids, and keeps the one straddling it', async () => {
    const tenant = randomUUID();
    const writer = new TypeormLogChainWriter(own.database.dataSource.manager);
    const old = aLog(tenant, '2045-01-10T00:00:00Z');
    await writer.append([old, aLog(tenant, '2045-02-10T00:00:00Z')]);
    const partitions = new TypeormLogPartitions(own.database.dataSource.manager);
    const dropped = await partitions.dropBefore(new Date('2045-02-15T00:00:00Z'));
    expect(dropped).toContain('logs_p20450101');
    expect(dropped).toContain('logs_legacy');
    expect(dropped).not.toContain('logs_p20450201');
    expect((await partitions.list()).map((p) => p.name)).toContain('logs_p20450201');
    expect(await query(`SELECT 1 FROM log_ids WHERE id = $1`, [old.id])).toEqual([]);
    expect((await chainOf(tenant)).partitions).toEqual(['logs_p20450201']);
  });

  it('converts a table holding logs online, and back, and again (up, down, up)', async () => {
    const runner = own.database.dataSource.createQueryRunner();
    await runner.connect();
    try {
      const migration = new LogPartitions1764400000000();
      await migration.down(runner);
      expect(await query(`SELECT 1 FROM pg_partitioned_table WHERE partrelid = 'logs'::regclass`)).toEqual([]);
      expect(await query(`SELECT to_regclass('log_ids') AS t`)).toEqual([{ t: null }]);
      // Logs of the unpartitioned table (not a valid chain: only their conversion is looked at).
      const tenant = randomUUID();
      await query(`INSERT INTO log_chains (tenant_id, seq, hash) VALUES ($1, 0, '\\x${'00'.repeat(32)}')`, [tenant]);
      const before = await query<{ n: number }>('SELECT count(*)::int AS n FROM logs');
      await query(
        `INSERT INTO logs (id, tenant_id, actor_type, entity_type, entity_id, operation, message, created_at, seq, hash)
        SELECT gen_random_uuid(), $1, 'system', 'token', 'tok_' || g, 'read', 'm', now() - g * interval '1 day', g, '\\x00' FROM generate_series(1, 100) g`,
        [tenant],
      );
      await migration.up(runner);
      expect(await query<{ n: number }>('SELECT count(*)::int AS n FROM logs')).toEqual([{ n: before[0]!.n + 100 }]);
      expect(await query<{ n: number }>('SELECT count(*)::int AS n FROM logs l JOIN log_ids i USING (id, tenant_id)')).toEqual([{ n: before[0]!.n + 100 }]);
      const partitions = await partitionsOf();
      expect(partitions[0]!.name).toBe('logs_legacy');
      // Append-only on every partition, the converted one included.
      await expect(query(`DELETE FROM logs WHERE tenant_id = $1`, [tenant])).rejects.toThrow(/append-only/);
      await expect(query(`UPDATE logs SET message = 'x' WHERE tenant_id = $1`, [tenant])).rejects.toThrow(/append-only/);
      // An id already stored under another tenant is still a conflict, whatever partition holds it.
      const [{ id: taken }] = await query<{ id: string }>(`SELECT id FROM logs WHERE tenant_id = $1 LIMIT 1`, [tenant]);
      await expect(
        new TypeormLogChainWriter(own.database.dataSource.manager).append([aLog(randomUUID(), '2050-05-05T00:00:00Z', { id: taken })]),
      ).rejects.toThrow(/already stored under another tenant/);
      await migration.down(runner);
      await migration.up(runner);
      expect(await query<{ n: number }>('SELECT count(*)::int AS n FROM logs')).toEqual([{ n: before[0]!.n + 100 }]);
      expect(await own.database.dataSource.showMigrations()).toBe(false);
    } finally {
      await runner.release();
    }
  });
});
