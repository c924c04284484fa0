import { ApplicationExpiryScheduler, ApplicationRepository, deleteApplication, UnitOfWork } from '@gatehouse/domain';
import { expiryJobId, QueueName } from '@gatehouse/jobs';
import { TEST_REDIS_URL } from '@gatehouse/test-support/test-env';
import { applicationExists, insertExpiringApplication, logsOf } from './support/applications';
import { deleteQueueKeys, rawQueue, uniquePrefix, waitFor } from './support/queue-test-support';
import { JobsHost, startJobsHost } from '@gatehouse/test-support/jobs-host';

// The project-level testTimeout is not applied to multi-project runs; these tests wait on real queues.
jest.setTimeout(60_000);

describe.each([
  { driver: 'BullMQ', redis: true },
  { driver: 'in-process', redis: false },
])('application expiry ($driver)', ({ redis }) => {
  const prefix = uniquePrefix('expiry');
  let host: JobsHost;
  const queue = rawQueue(prefix, QueueName.ApplicationExpiry);

  beforeAll(async () => {
    // The sweep is pushed out of the way except where a test runs it: the scheduled job must do the work.
    host = await startJobsHost({
      runJobs: true,
      redisUrl: redis ? TEST_REDIS_URL : undefined,
      prefix,
      expirySweepIntervalMs: 600_000,
      outboxRelayMinAgeMs: 1000,
      outboxRelayIntervalMs: 200,
    });
  });
  afterAll(async () => {
    await host.close();
    await queue.close();
    await deleteQueueKeys(prefix);
  });

  it('deletes an expiring application at expires_at, logged as a delete by the system', async () => {
    const app = await insertExpiringApplication(host, 1500);
    await host.context.get(ApplicationExpiryScheduler).schedule(app);
    if (redis) {
      const job = await waitFor(
        () => queue.getJob(expiryJobId(app.id)),
        (j) => j !== undefined,
        5000,
      );
      expect(await job!.getState()).toBe('delayed');
    }
    expect(
      await waitFor(
        () => applicationExists(host, app.id),
        (exists) => !exists,
      ),
    ).toBe(false);
    const logs = await waitFor(
      () => logsOf(host, app.tenantId),
      (rows) => rows.length >= 2,
    );
    expect(logs.map((l) => [l.operation, l.actor_type, l.actor_id])).toEqual([
      ['create', 'system', null],
      ['delete', 'system', null],
    ]);
    expect(logs[1]!.message).toBe("Application 'short-lived' expired and was deleted");
  });

  it('schedules one job per application however often it is asked', async () => {
    const app = await insertExpiringApplication(host, 60_000);
    const scheduler = host.context.get(ApplicationExpiryScheduler);
    await Promise.all([scheduler.schedule(app), scheduler.schedule(app), scheduler.schedule(app)]);
    if (redis) {
      await waitFor(
        () => queue.getJob(expiryJobId(app.id)),
        (j) => j !== undefined,
        5000,
      );
      const delayed = await queue.getDelayed();
      expect(delayed.filter((j) => j.id === expiryJobId(app.id))).toHaveLength(1);
    }
    expect(await applicationExists(host, app.id)).toBe(true);
  });

  it('does no harm when the application was deleted or regenerated before its time', async () => {
    const deleted = await insertExpiringApplication(host, 1200);
    const regenerated = await insertExpiringApplication(host, 1200);
    const scheduler = host.context.get(ApplicationExpiryScheduler);
    await scheduler.schedule(deleted);
    await scheduler.schedule(regenerated);
    const uow = host.context.get(UnitOfWork);
    const actor = { id: deleted.id, type: 'application' as const };
    await deleteApplication(uow, deleted.tenantId, deleted.id, actor, 'deleted');
    await uow.run(async (tx) => {
      await tx.get(ApplicationRepository).update({ ...regenerated, keyHash: 'f'.repeat(64), modifiedAt: new Date() });
    });

    expect(
      await waitFor(
        () => applicationExists(host, regenerated.id),
        (exists) => !exists,
      ),
    ).toBe(false);
    const deletedLogs = await waitFor(
      () => logsOf(host, deleted.tenantId),
      (rows) => rows.length >= 2,
    );
    // Give the deleted one's job the same time to fire: it must find nothing and record nothing.
    await waitFor(
      () => logsOf(host, regenerated.tenantId),
      (rows) => rows.length >= 2,
    );
    expect((await logsOf(host, deleted.tenantId)).map((l) => [l.operation, l.actor_type])).toEqual([
      ['create', 'system'],
      ['delete', 'application'],
    ]);
    expect(deletedLogs).toHaveLength(2);
    expect((await logsOf(host, regenerated.tenantId)).map((l) => [l.operation, l.actor_type])).toEqual([
      ['create', 'system'],
      ['delete', 'system'],
    ]);
    if (redis) expect(await queue.getFailedCount()).toBe(0);
  });

  it('leaves what a lost job missed to the sweep', async () => {
    const app = await insertExpiringApplication(host, 300);
    // Never scheduled, as if the job were lost (Redis flushed, process died before adding it).
    await waitFor(
      async () => Date.now(),
      (now) => now > app.expiresAt!.getTime(),
      5000,
    );
    await host.jobs.runMaintenance();
    expect(await applicationExists(host, app.id)).toBe(false);
    const logs = await waitFor(
      () => logsOf(host, app.tenantId),
      (rows) => rows.length >= 2,
    );
    expect(logs.map((l) => [l.operation, l.actor_type])).toEqual([
      ['create', 'system'],
      ['delete', 'system'],
    ]);
  });
});
