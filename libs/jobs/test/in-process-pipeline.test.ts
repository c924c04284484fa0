import { randomUUID } from 'node:crypto';
import { UnitOfWork } from '@gatehouse/domain';
import { InProcessJobQueue, JobName, JobQueue } from '@gatehouse/jobs';
import { countLogs, waitFor } from './support/queue-test-support';
import { JobsHost, startJobsHost } from '@gatehouse/test-support/jobs-host';

// The project-level testTimeout is not applied to multi-project runs; these tests wait on real queues.
jest.setTimeout(60_000);

describe('audit logs without Redis (in-process queue)', () => {
  let host: JobsHost;
  const crashedTenant = randomUUID();
  const crashedIds = [randomUUID(), randomUUID(), randomUUID()];

  beforeAll(async () => {
    // Events a previous process committed but never published (it died in between): only the outbox has them.
    const seed = await startJobsHost({ runJobs: false });
    for (const id of crashedIds) {
      await seed.database.dataSource.query(
        `INSERT INTO audit_outbox (id, tenant_id, actor_id, actor_type, entity_type, entity_id, operation, message, created_at)
         VALUES ($1, $2::uuid, NULL, 'system', 'tenant', $2::text, 'update', 'before the crash', now() - interval '1 minute')`,
        [id, crashedTenant],
      );
    }
    await seed.close();
    host = await startJobsHost({ runJobs: true, outboxRelayMinAgeMs: 5000, outboxRelayIntervalMs: 600_000 });
  });
  afterAll(() => host.close());

  it('relays at start what a previous process left in the outbox', async () => {
    expect(
      await waitFor(
        () => countLogs(host.database, crashedTenant),
        (n) => n >= 3,
      ),
    ).toBe(3);
    const rows = await host.database.dataSource.query('SELECT id FROM logs WHERE tenant_id = $1 ORDER BY id', [crashedTenant]);
    expect(rows.map((r: { id: string }) => r.id)).toEqual([...crashedIds].sort());
  });

  it('writes committed audit events through the in-process queue', async () => {
    const tenantId = randomUUID();
    const uow = host.context.get(UnitOfWork);
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        uow.run(async (tx) => {
          tx.record({ tenantId, actor: { id: null, type: 'system' }, entityType: 'tenant', entityId: tenantId, operation: 'update', message: `change ${i}` });
        }),
      ),
    );
    expect(
      await waitFor(
        () => countLogs(host.database, tenantId),
        (n) => n >= 40,
      ),
    ).toBe(40);
  });

  it('keeps a malformed job as failed with its reason and runs the others', async () => {
    const queue = host.context.get(JobQueue) as InProcessJobQueue;
    const tenantId = randomUUID();
    await queue.add(JobName.AuditLog, { tenant_id: tenantId, entity_type: 'token', entity_id: '', operation: 'read', message: 'x' });
    await queue.add(JobName.AuditLog, { tenant_id: tenantId, entity_type: 'token', entity_id: 'tok_1', operation: 'read', message: 'x' });
    expect(
      await waitFor(
        () => countLogs(host.database, tenantId),
        (n) => n >= 1,
      ),
    ).toBe(1);
    const failed = await waitFor(
      async () => queue.failed.filter((f) => (f.data as { tenant_id: string }).tenant_id === tenantId),
      (f) => f.length > 0,
    );
    expect(failed.map((f) => f.reason)).toEqual(['invalid audit-log payload: entity_id: must not be empty']);
  });
});
