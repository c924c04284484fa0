import { ApplyLogRetention, DropExpiredLogPartitions, LogPartitions, SystemClock, UnitOfWork } from '@gatehouse/domain';
import { CLI_MAIN, runToCompletion } from '@gatehouse/test-support/service-process';
import { OwnDatabase, ownDatabase } from '@gatehouse/test-support/own-database';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { TEST_LOG_SIGNING_KEY } from '@gatehouse/test-support/test-env';
import { as, auditEvents } from '../support/application-fixtures';
import { verifyWhile } from '../support/racing-verification';
import { appendTokenReads, DAY, signCheckpoints, signer, verifierOf } from '../support/retention-fixtures';

jest.setTimeout(120_000);

/**
 * LOG_RETENTION_DAYS by whole partitions, against PostgreSQL: the worker's retention use case as the app wires it from
 * the configuration drops the oldest partitions once every tenant with logs in them may lose them, signing an anchor
 * for each; a tenant with a longer period keeps its partition, and a partition holding a log that is not the start of
 * its tenant's chain is kept. A database of its own: dropping partitions removes every tenant's logs in them.
 */
describe('log retention by partitions (LOG_RETENTION_DAYS)', () => {
  let own: OwnDatabase;
  let t: TestApp;

  beforeAll(async () => {
    own = await ownDatabase('partition_retention');
    t = await startTestApp({ DATABASE_URL: own.url, LOG_RETENTION_DAYS: '300' });
    // A fresh installation's logs_legacy (empty) spans everything before next month: without it, logs of a year ago
    // get the monthly partitions of an installation that has been running for a year.
    const [legacy] = await t.app.get(LogPartitions).list();
    expect(legacy).toMatchObject({ name: 'logs_legacy', from: null });
    expect(await t.app.get(LogPartitions).dropBefore(legacy!.to)).toEqual(['logs_legacy']);
  });
  afterAll(async () => {
    await t?.close();
    await own?.drop();
  });

  const sql = (text: string, params: unknown[] = []) => t.database.dataSource.query(text, params);
  const partitions = async () => (await t.app.get(LogPartitions).list()).map((p) => p.name);
  const partitionOf = async (ageDays: number) => {
    const at = Date.now() - ageDays * DAY;
    return (await t.app.get(LogPartitions).list()).find((p) => (p.from?.getTime() ?? 0) <= at && at < p.to.getTime())?.name;
  };
  const verify = (tenantId: string) => verifierOf(t).execute(tenantId, [signer.publicKey]);
  const logsOf = async (tenantId: string) =>
    (await sql('SELECT seq::int AS seq FROM logs WHERE tenant_id = $1 ORDER BY seq', [tenantId])).map((r: { seq: number }) => r.seq);
  const anchorsOf = async (tenantId: string) =>
    (await sql('SELECT seq::int AS seq FROM log_retention_anchors WHERE tenant_id = $1 ORDER BY seq', [tenantId])).map((r: { seq: number }) => r.seq);

  const seed = (tenantId: string, count: number, ageDays: number) => appendTokenReads(t, tenantId, count, ageDays * DAY);

  it('drops the partitions every tenant may lose, behind an anchor each; a longer period keeps its partition; the trails verify', async () => {
    const [a, b, c] = [await t.tenant(), await t.tenant(), await t.tenant()];
    // a: no period of its own (LOG_RETENTION_DAYS, 300); b: ten years; c: 30 days.
    await as(t, b.key).put('/tenant/settings', { log_retention_days: 3650 }).expect(200);
    await as(t, c.key).put('/tenant/settings', { log_retention_days: 30 }).expect(200);
    // What applies, beside each tenant's own: LOG_RETENTION_DAYS for a; a GET's body sent back changes nothing.
    const shown = await as(t, a.key).get('/tenant/settings').expect(200);
    expect(shown.body).toEqual({ log_retention_days: null, effective_log_retention_days: 300 });
    expect((await as(t, a.key).put('/tenant/settings', shown.body).expect(200)).body).toEqual(shown.body);
    expect((await as(t, b.key).get('/tenant/settings').expect(200)).body).toEqual({ log_retention_days: 3650, effective_log_retention_days: 3650 });
    await seed(a.tenant.id, 4, 500); // a 1-4, in the partition of 500 days ago (P1), with c 1-2
    await seed(c.tenant.id, 2, 500);
    await seed(a.tenant.id, 3, 400); // a 5-7, in the partition of 400 days ago (P2), with b 1-2
    await seed(b.tenant.id, 2, 400);
    for (const tenant of [a, b, c]) await seed(tenant.tenant.id, 2, 1);
    await signCheckpoints(t);
    const [p1, p2] = [await partitionOf(500), await partitionOf(400)];
    expect(p1).toBeDefined();
    expect(p2).toBeDefined();
    expect(p1).not.toBe(p2);

    // The worker's task, as the app wires it from LOG_RETENTION_DAYS.
    expect(await t.app.get(ApplyLogRetention).execute()).toBe(4 + 2 + 3);

    // P1 is gone with a's 1-4 and c's 1-2, each behind an anchor at its last log there; P2 stays for b (ten years),
    // and a's logs in it were removed by a batch (its anchor at 7); b keeps everything.
    expect(await partitions()).not.toContain(p1);
    expect(await partitions()).toContain(p2);
    expect(await anchorsOf(a.tenant.id)).toEqual([4, 7]);
    expect(await anchorsOf(c.tenant.id)).toEqual([2]);
    expect(await anchorsOf(b.tenant.id)).toEqual([]);
    expect(await logsOf(a.tenant.id)).toEqual([8, 9]);
    expect(await logsOf(c.tenant.id)).toEqual([3, 4]);
    expect(await logsOf(b.tenant.id)).toEqual([1, 2, 3, 4]);

    // Retention's audit logs, as a batch writes them.
    const removals = async (tenantId: string) => (await auditEvents(t, { tenantId })).filter((e) => e.operation === 'delete').map((e) => e.message);
    expect(await removals(a.tenant.id)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Audit logs up to position 4 removed by the retention period of 300 day\\(s\\) \\(4 log\\(s\\), with partition ${p1}\\); retention anchor signed with key ${signer.keyId}$`,
        ),
      ),
      expect.stringMatching(/^Audit logs up to position 7 removed by the retention period of 300 day\(s\) \(3 log\(s\)\); retention anchor/),
    ]);
    expect(await removals(c.tenant.id)).toEqual([
      expect.stringMatching(/^Audit logs up to position 2 removed by the retention period of 30 day\(s\) \(2 log\(s\), with partition /),
    ]);

    // Every trail verifies from its anchor, with the use case and with `gatehouse logs verify`.
    expect(await verify(a.tenant.id)).toMatchObject({ valid: true, logs: 2, anchor: { position: 7 }, lastVerifiedCheckpoint: { position: 9 } });
    expect(await verify(c.tenant.id)).toMatchObject({ valid: true, logs: 2, anchor: { position: 2 }, lastVerifiedCheckpoint: { position: 4 } });
    expect(await verify(b.tenant.id)).toMatchObject({ valid: true, logs: 4, anchor: undefined });
    const cli = await runToCompletion(CLI_MAIN, ['logs', 'verify', '--tenant', c.tenant.id, '--json'], {
      DATABASE_URL: own.url,
      LOG_SIGNING_KEY: TEST_LOG_SIGNING_KEY,
      LOG_LEVEL: 'silent',
    });
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ valid: true, anchor: { position: 2 } });
    expect((await as(t, a.key).get('/logs/retention-anchor').expect(200)).body.anchor).toMatchObject({ position: 7, key_id: signer.keyId });

    // The period a tenant without its own gets is named in the audit log of a change, and by the CLI.
    await as(t, c.key).put('/tenant/settings', { log_retention_days: null }).expect(200);
    const updates = async (tenantId: string) => (await auditEvents(t, { entityId: tenantId })).filter((e) => e.operation === 'update').map((e) => e.message);
    expect(await updates(b.tenant.id)).toEqual([expect.stringMatching(/log retention set to 3650 day\(s\) \(was the default of 300 day\(s\)\)$/)]);
    expect(await updates(c.tenant.id)).toEqual([
      expect.stringMatching(/log retention set to 30 day\(s\) \(was the default of 300 day\(s\)\)$/),
      expect.stringMatching(/log retention set to the default of 300 day\(s\) \(was 30 day\(s\)\)$/),
    ]);
    const cleared = await runToCompletion(CLI_MAIN, ['tenant', 'retention', '--tenant', b.tenant.id, '--forever'], {
      DATABASE_URL: own.url,
      LOG_RETENTION_DAYS: '300',
      LOG_LEVEL: 'silent',
    });
    expect(cleared.stdout).toBe(`tenant ${b.tenant.id}: audit logs kept the default of 300 day(s) (LOG_RETENTION_DAYS)\n`);
    await as(t, b.key).put('/tenant/settings', { log_retention_days: 3650 }).expect(200);

    // Nothing more to do: P2 still waits for b.
    expect(await t.app.get(ApplyLogRetention).execute()).toBe(0);
    expect(await partitions()).toContain(p2);
  });

  it('gives way to a running retention batch, and a drop that cannot take its lock in time rolls its anchors and audit logs back', async () => {
    const f = await t.tenant();
    await seed(f.tenant.id, 3, 800); // the oldest partition now, f's alone
    await seed(f.tenant.id, 1, 1);
    const p = await partitionOf(800);
    expect((await t.app.get(LogPartitions).list())[0]!.name).toBe(p);
    const holding = async (lock: string, during: () => Promise<void>) => {
      const runner = t.database.dataSource.createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      try {
        await runner.query(lock);
        await during();
      } finally {
        await runner.rollbackTransaction();
        await runner.release();
      }
    };
    const unchanged = async () => {
      expect(await partitions()).toContain(p);
      expect(await anchorsOf(f.tenant.id)).toEqual([]);
      expect(await logsOf(f.tenant.id)).toEqual([1, 2, 3, 4]);
      expect((await auditEvents(t, { tenantId: f.tenant.id })).filter((e) => e.operation === 'delete')).toEqual([]);
    };

    // The drop alone (the batches would remove f's logs row by row meanwhile: they do not wait for a drop).
    const drop = () => new DropExpiredLogPartitions(t.app.get(UnitOfWork), signer, new SystemClock(), 300).execute();
    // A retention batch holds the retention lock shared: the drop gives way, dropping nothing.
    await holding(`SELECT pg_advisory_xact_lock_shared(hashtextextended('gatehouse.log-retention', 0))`, async () => {
      expect(await drop()).toBe(0);
      await unchanged();
    });
    // A long reader of the logs: the drop's ACCESS EXCLUSIVE lock is not had within 5 s; its transaction, anchors and
    // audit logs included, is rolled back.
    await holding('SELECT count(*) FROM logs', async () => {
      await expect(drop()).rejects.toMatchObject({ code: '55P03' });
      await unchanged();
    });
    // Free again: dropped, behind its anchor, while a verification reads the trail (it read no anchor, then its first
    // page starts at 4): its second pass verifies from the new anchor, no false break.
    let dropped = 0;
    const { result, passes } = await verifyWhile(t, f.tenant.id, [signer.publicKey], async () => (dropped = await drop()));
    expect(dropped).toBe(3);
    expect(await partitions()).not.toContain(p);
    expect(await anchorsOf(f.tenant.id)).toEqual([3]);
    expect(passes).toBe(2);
    expect(result).toMatchObject({ valid: true, logs: 1, anchor: { position: 3 } });
  });

  it('keeps a partition whose logs are not the start of their chain: a drop never leaves a gap no anchor covers', async () => {
    const d = await t.tenant();
    // Position 1 is recent; position 2 was sent with a created_at of 600 days ago, into the oldest partition.
    await seed(d.tenant.id, 1, 1);
    await seed(d.tenant.id, 1, 600);
    const p0 = await partitionOf(600);
    expect((await t.app.get(LogPartitions).list())[0]!.name).toBe(p0);

    await t.app.get(ApplyLogRetention).execute();
    expect(await partitions()).toContain(p0);
    expect(await logsOf(d.tenant.id)).toEqual([1, 2]);
    expect(await anchorsOf(d.tenant.id)).toEqual([]);
    expect(await verify(d.tenant.id)).toMatchObject({ valid: true, logs: 2 });

    // A position missing from the partition (removed outside retention) keeps it too, and is still reported.
    const e = await t.tenant();
    await seed(e.tenant.id, 3, 700);
    await seed(e.tenant.id, 1, 1);
    await t.database.dataSource.transaction(async (em) => {
      await em.query('SET LOCAL session_replication_role = replica');
      await em.query('DELETE FROM logs WHERE tenant_id = $1 AND seq = 2', [e.tenant.id]);
    });
    const pe = await partitionOf(700);
    await t.app.get(ApplyLogRetention).execute();
    expect(await partitions()).toContain(pe);
    // The batch removes position 1 only: it stops at the hole, which verification still reports.
    expect(await anchorsOf(e.tenant.id)).toEqual([1]);
    expect(await logsOf(e.tenant.id)).toEqual([3, 4]);
    expect(await verify(e.tenant.id)).toMatchObject({
      valid: false,
      firstInvalidLog: { position: 2, reason: expect.stringMatching(/no log at position 2 \(a log was deleted\)/) },
    });
  });
});
