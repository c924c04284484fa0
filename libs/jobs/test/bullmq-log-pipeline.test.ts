import { randomUUID } from 'node:crypto';
import { Job } from 'bullmq';
import { TenantRepository, UnitOfWork } from '@gatehouse/domain';
import { BullmqJobConsumer, JobHandler, JobHandlerRegistry, JobName, QueueName } from '@gatehouse/jobs';
import { TEST_REDIS_URL } from '@gatehouse/test-support/test-env';
import { countLogs, deleteQueueKeys, rawQueue, uniquePrefix, waitFor } from './support/queue-test-support';
import { JobsHost, startJobsHost } from '@gatehouse/test-support/jobs-host';

// The project-level testTimeout is not applied to multi-project runs; these tests wait on real queues.
jest.setTimeout(60_000);

const prefix = uniquePrefix('pipeline');
// The relay is pushed out of the way: these tests are about what travels through the queue.
const options = {
  runJobs: true,
  redisUrl: TEST_REDIS_URL,
  prefix,
  outboxRelayMinAgeMs: 600_000,
  outboxRelayIntervalMs: 600_000,
  expirySweepIntervalMs: 600_000,
};

function entry(tenantId: string, extra: Record<string, unknown> = {}) {
  return { tenant_id: tenantId, entity_type: 'token', entity_id: `tok_${randomUUID()}`, operation: 'read', message: 'Token read', ...extra };
}

async function record(host: JobsHost, tenantId: string, count: number): Promise<void> {
  const uow = host.context.get(UnitOfWork);
  for (let i = 0; i < count; i++) {
    await uow.run(async (tx) => {
      tx.record({ tenantId, actor: { id: null, type: 'system' }, entityType: 'tenant', entityId: tenantId, operation: 'update', message: `change ${i}` });
    });
  }
}

describe('audit logs through BullMQ', () => {
  let host: JobsHost;
  const queue = rawQueue(prefix);

  beforeAll(async () => (host = await startJobsHost(options)));
  afterAll(async () => {
    await host.close();
    await queue.close();
    await deleteQueueKeys(prefix);
  });

  it('writes each committed audit event as a log with the event id, and empties its outbox row', async () => {
    const tenantId = randomUUID();
    await record(host, tenantId, 25);
    expect(
      await waitFor(
        () => countLogs(host.database, tenantId),
        (n) => n >= 25,
      ),
    ).toBe(25);
    const [outbox] = await host.database.dataSource.query('SELECT count(*)::int AS n FROM audit_outbox WHERE tenant_id = $1', [tenantId]);
    expect(outbox.n).toBe(0);
  });

  it('leaves no log, and nothing to relay, for a change whose transaction rolled back', async () => {
    const rolledBack = randomUUID();
    const uow = host.context.get(UnitOfWork);
    await expect(
      uow.run(async (tx) => {
        await tx.get(TenantRepository).insert({ id: rolledBack, name: 'rolled back', createdAt: new Date() });
        tx.record({
          tenantId: rolledBack,
          actor: { id: null, type: 'system' },
          entityType: 'tenant',
          entityId: rolledBack,
          operation: 'create',
          message: 'never',
        });
        throw new Error('the change fails after recording its event');
      }),
    ).rejects.toThrow('the change fails after recording its event');
    // A committed change recorded after it has been logged: anything the rolled-back one sent would be too.
    const marker = randomUUID();
    await record(host, marker, 1);
    await waitFor(
      () => countLogs(host.database, marker),
      (n) => n === 1,
    );
    expect(await countLogs(host.database, rolledBack)).toBe(0);
    const [outbox] = await host.database.dataSource.query('SELECT count(*)::int AS n FROM audit_outbox WHERE tenant_id = $1', [rolledBack]);
    expect(outbox.n).toBe(0);
    const [tenant] = await host.database.dataSource.query('SELECT count(*)::int AS n FROM tenants WHERE id = $1', [rolledBack]);
    expect(tenant.n).toBe(0);
  });

  it("puts another service's malformed jobs in the failed set with the reason and goes on with the rest", async () => {
    const tenantId = randomUUID();
    const bad = await queue.add(JobName.AuditLog, { ...entry(tenantId), tenant_id: 'acme', operation: 'rename' });
    const badBatch = await queue.add(JobName.AuditLogBatch, { logs: [entry(tenantId), { ...entry(tenantId), entity_type: 'spaceship' }] });
    const unknown = await queue.add('audit-logz', entry(tenantId));
    const good = await queue.add(JobName.AuditLog, entry(tenantId, { actor_id: randomUUID(), actor_type: 'user' }));

    expect(
      await waitFor(
        () => countLogs(host.database, tenantId),
        (n) => n >= 1,
      ),
    ).toBe(1);
    const state = (job: Job) =>
      waitFor(
        () => queue.getJobState(job.id!),
        (s) => s === 'failed' || s === 'completed' || s === 'unknown',
      );
    expect(await state(bad)).toBe('failed');
    expect(await state(badBatch)).toBe('failed');
    expect(await state(unknown)).toBe('failed');
    expect((await queue.getJob(bad.id!))!.failedReason).toBe(
      'invalid audit-log payload: tenant_id: must be a UUID; operation: must be one of create, update, delete, read',
    );
    expect((await queue.getJob(badBatch.id!))!.failedReason).toMatch(/^invalid audit-log-batch payload: logs\[1\]\.entity_type: must be one of /);
    expect((await queue.getJob(unknown.id!))!.failedReason).toBe("Unknown job name 'audit-logz' on queue audit-logs");
    // The whole batch failed: none of its entries was written, so fixing and retrying it cannot duplicate one.
    const [row] = await host.database.dataSource.query('SELECT actor_type FROM logs WHERE tenant_id = $1', [tenantId]);
    expect(row.actor_type).toBe('user');
    expect(good.id).toBeDefined();
  });

  it('fails at once, never retried, a job whose text PostgreSQL cannot store (an unpaired surrogate), naming the field and not the value', async () => {
    const tenantId = randomUUID();
    const lone = await queue.add(JobName.AuditLog, entry(tenantId, { message: 'secret-ish \ud800 text' }));
    const loneInBatch = await queue.add(JobName.AuditLogBatch, { logs: [entry(tenantId), entry(tenantId, { user_agent: 'agent \udfff' })] });
    const good = await queue.add(JobName.AuditLog, entry(tenantId, { message: 'a pair is fine \ud83d\ude00' }));

    const settled = (job: Job) =>
      waitFor(
        () => queue.getJobState(job.id!),
        (s) => s === 'failed' || s === 'completed' || s === 'unknown',
      );
    expect(await settled(lone)).toBe('failed');
    expect(await settled(loneInBatch)).toBe('failed');
    expect(await settled(good)).toBe('completed');
    const failed = (await queue.getJob(lone.id!))!;
    expect(failed.attemptsMade).toBe(1);
    expect(failed.failedReason).toBe('invalid audit-log payload: message: must not contain NUL characters or unpaired surrogates');
    expect(failed.failedReason).not.toContain('secret-ish');
    const failedBatch = (await queue.getJob(loneInBatch.id!))!;
    expect(failedBatch.attemptsMade).toBe(1);
    expect(failedBatch.failedReason).toBe('invalid audit-log-batch payload: logs[1].user_agent: must not contain NUL characters or unpaired surrogates');
    // Only the good job's log: the batch is all or nothing.
    const rows = await host.database.dataSource.query('SELECT message FROM logs WHERE tenant_id = $1', [tenantId]);
    expect(rows).toEqual([{ message: 'a pair is fine \ud83d\ude00' }]);
  });

  it('writes a log given with an id once however often it is queued, and gives one without an id the job time', async () => {
    const tenantId = randomUUID();
    const id = randomUUID();
    const job = await queue.add(JobName.AuditLog, entry(tenantId));
    await queue.addBulk([1, 2, 3].map(() => ({ name: JobName.AuditLog, data: entry(tenantId, { id, message: 'same event' }) })));
    await waitFor(
      () => countLogs(host.database, tenantId),
      (n) => n >= 2,
    );
    await waitFor(
      () => queue.getJobCounts('wait', 'active', 'delayed'),
      (c) => c.wait + c.active + c.delayed === 0,
    );
    expect(await countLogs(host.database, tenantId)).toBe(2);
    const rows = await host.database.dataSource.query('SELECT id, created_at FROM logs WHERE tenant_id = $1 AND id <> $2', [tenantId, id]);
    expect(rows).toHaveLength(1);
    expect(new Date(rows[0].created_at).getTime()).toBe(job.timestamp);
  });

  it('fails for good the job of a log whose id another tenant holds, and writes the rest of its batch and its neighbours', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const taken = randomUUID();
    const first = await queue.add(JobName.AuditLog, entry(a, { id: taken, message: "a's log" }));
    await waitFor(
      () => queue.getJobState(first.id!),
      (s) => s === 'completed',
    );
    // Queued together, so that the worker writes them in one batch.
    const [conflicting, neighbour, again] = await queue.addBulk([
      { name: JobName.AuditLogBatch, data: { logs: [entry(b, { id: taken, message: "b's log" }), entry(b, { message: 'rest of the batch' })] } },
      { name: JobName.AuditLog, data: entry(b, { message: 'neighbour' }) },
      { name: JobName.AuditLog, data: entry(a, { id: taken, message: "a's log again" }) }, // a duplicate: skipped, completes
    ]);
    const settled = (job: Job) =>
      waitFor(
        () => queue.getJobState(job.id!),
        (s) => s === 'failed' || s === 'completed',
      );
    expect(await settled(conflicting!)).toBe('failed');
    expect(await settled(neighbour!)).toBe('completed');
    expect(await settled(again!)).toBe('completed');
    const failed = (await queue.getJob(conflicting!.id!))!;
    expect(failed.failedReason).toBe(`log id(s) already stored under another tenant, not written: ${taken}`);
    expect(failed.attemptsStarted).toBe(1); // failed at once, not retried
    const rows: { tenant_id: string; message: string }[] = await host.database.dataSource.query(
      'SELECT tenant_id, message FROM logs WHERE tenant_id = ANY($1::uuid[]) ORDER BY tenant_id, seq',
      [[a, b]],
    );
    expect(rows.filter((r) => r.tenant_id === a).map((r) => r.message)).toEqual(["a's log"]);
    expect(
      rows
        .filter((r) => r.tenant_id === b)
        .map((r) => r.message)
        .sort(),
    ).toEqual(['neighbour', 'rest of the batch']);
    for (const tenantId of [a, b]) {
      const [chain] = await host.database.dataSource.query(
        `SELECT count(*)::int AS n, bool_and(ok) AS valid, max(seq)::int AS last, (SELECT seq::int FROM log_chains WHERE tenant_id = $1) AS head FROM (
           SELECT seq, hash = log_chain(tenant_id, seq, id, created_at, actor_type, actor_id, entity_type, entity_id, operation, message,
             request_id, source_ip, user_agent) OVER (ORDER BY seq) AS ok FROM logs WHERE tenant_id = $1) c`,
        [tenantId],
      );
      expect(chain).toEqual({ n: chain.last, valid: true, last: chain.head, head: tenantId === a ? 1 : 2 });
    }
  });

  it('writes every log exactly once when two workers consume at the same time', async () => {
    const second = await startJobsHost(options);
    try {
      const tenantId = randomUUID();
      const entries = Array.from({ length: 2000 }, () => entry(tenantId, { id: randomUUID() }));
      // 400 are queued twice, as a retried publish or another service's retry would.
      const jobs = [...entries, ...entries.slice(0, 400)].map((data) => ({ name: JobName.AuditLog, data }));
      for (let i = 0; i < jobs.length; i += 500) await queue.addBulk(jobs.slice(i, i + 500));
      await waitFor(
        () => countLogs(host.database, tenantId),
        (n) => n >= 2000,
        40_000,
      );
      await waitFor(
        () => queue.getJobCounts('wait', 'active', 'delayed'),
        (c) => c.wait + c.active + c.delayed === 0,
        40_000,
      );
      expect(await countLogs(host.database, tenantId)).toBe(2000);
      const [dupes] = await host.database.dataSource.query(
        'SELECT count(*)::int AS n FROM (SELECT entity_id FROM logs WHERE tenant_id = $1 GROUP BY entity_id HAVING count(*) > 1) d',
        [tenantId],
      );
      expect(dupes.n).toBe(0);
      const completed = await queue.getCompleted(0, 999);
      expect(new Set(completed.map((j) => j.processedBy)).size).toBe(2);
    } finally {
      await second.close();
    }
  });
});

describe('the BullMQ consumer', () => {
  const retryPrefix = uniquePrefix('retry');
  const failures = new Map<string, number>();

  /** Fails each job `failFirst` times (as a database outage would), then succeeds; 99 means forever. */
  class FlakyHandler extends JobHandler {
    constructor(readonly job: JobName) {
      super();
    }
    async handle(payload: unknown): Promise<void> {
      const data = payload as { failFirst: number; key: string };
      const seen = failures.get(data.key) ?? 0;
      failures.set(data.key, seen + 1);
      if (seen < data.failFirst) throw new Error(`database unavailable (run ${seen + 1})`);
    }
  }

  let consumer: BullmqJobConsumer;
  const queue = rawQueue(retryPrefix);

  beforeAll(() => {
    const registry = new JobHandlerRegistry(Object.values(JobName).map((name) => new FlakyHandler(name)));
    consumer = new BullmqJobConsumer(registry, {
      redisUrl: TEST_REDIS_URL,
      prefix: retryPrefix,
      concurrency: { [QueueName.AuditLogs]: 4, [QueueName.ApplicationExpiry]: 1 },
      maxAttempts: 4,
      backoffBaseMs: 50,
      backoffMaxMs: 200,
    });
    consumer.start();
  });
  afterAll(async () => {
    await consumer.close();
    await queue.close();
    await deleteQueueKeys(retryPrefix);
  });

  it('retries a transient failure with backoff whatever the producer asked for, then completes the job', async () => {
    const job = await queue.add(JobName.AuditLog, { failFirst: 2, key: 'transient' });
    expect(
      await waitFor(
        () => queue.getJobState(job.id!),
        (s) => s === 'completed' || s === 'failed' || s === 'unknown',
      ),
    ).not.toBe('failed');
    expect(failures.get('transient')).toBe(3);
  });

  it('keeps a job that never succeeds in the failed set, with the last reason, after the attempts', async () => {
    const job = await queue.add(JobName.AuditLog, { failFirst: 99, key: 'permanent' });
    expect(
      await waitFor(
        () => queue.getJobState(job.id!),
        (s) => s === 'failed',
      ),
    ).toBe('failed');
    expect(failures.get('permanent')).toBe(4);
    expect((await queue.getJob(job.id!))!.failedReason).toBe('gave up after 4 attempts: database unavailable (run 4)');
  });
});
