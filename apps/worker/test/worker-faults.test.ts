import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@gatehouse/config';
import { CreatedTenant } from '@gatehouse/domain';
import { Database, openDatabase } from '@gatehouse/persistence';
import { BackgroundJobsOptions, JobName } from '@gatehouse/jobs';
import { countLogs, deleteQueueKeys, rawQueue, uniquePrefix, waitFor } from '@gatehouse/jobs/testing';
import { TcpForwarder } from '@gatehouse/test-support/tcp-forwarder';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '@gatehouse/test-support/test-env';
import { WorkerModule } from '../src/worker.module';

// The project-level testTimeout is not applied to multi-project runs; these tests wait on real queues.
jest.setTimeout(60_000);

const prefix = uniquePrefix('faults');

interface RunningWorker {
  context: INestApplicationContext;
  stop(): Promise<void>;
}

/** The worker as `npm run start:worker` runs it, minus the process: WorkerModule in an application context. */
async function startWorker(jobs: Partial<BackgroundJobsOptions> = {}): Promise<RunningWorker> {
  const config = loadConfig({ DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: prefix, LOG_LEVEL: 'silent' });
  const database: Database = await openDatabase({ url: TEST_DATABASE_URL, dataDir: '', poolSize: 4 });
  const context = await NestFactory.createApplicationContext(WorkerModule.register({ config, database, jobs }), { logger: false });
  return {
    context,
    stop: async () => {
      await context.close();
      await database.close();
    },
  };
}

/**
 * The api once /health/ready says so, as a load balancer would send it traffic. Before that its Redis connection may
 * still be opening (a few hundred ms under load): a publish is refused at once and its events are left to the outbox
 * relay, which the tests that push the relay out of the way would wait for in vain (the last test shows them relayed).
 */
async function startReadyApi(env: Record<string, string>): Promise<TestApp> {
  const api = await startTestApp(env);
  const ready = await readiness(api);
  if (ready !== 200) {
    await api.close();
    throw new Error(`the api did not become ready (${ready})`);
  }
  return api;
}

async function createApplications(t: TestApp, tenant: CreatedTenant, from: number, to: number, clients = 4): Promise<string[]> {
  const ids: string[] = [];
  // Several clients writing at once, as an api under load sees them.
  const lanes = Array.from({ length: clients }, async (_, lane) => {
    for (let i = from + lane; i < to; i += clients) {
      const res = await t
        .http()
        .post('/applications')
        .set('SVC-API-KEY', tenant.key)
        .send({ name: `app-${i}`, type: 'management', permissions: ['log:read'] });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
  });
  await Promise.all(lanes);
  return ids;
}

async function duplicatedEntities(t: TestApp, tenantId: string): Promise<number> {
  const [row] = await t.database.dataSource.query(
    `SELECT count(*)::int AS n FROM (SELECT entity_id, operation FROM logs WHERE tenant_id = $1 GROUP BY entity_id, operation HAVING count(*) > 1) d`,
    [tenantId],
  );
  return row.n;
}

async function outboxOf(t: TestApp, tenantId: string): Promise<number> {
  const [row] = await t.database.dataSource.query('SELECT count(*)::int AS n FROM audit_outbox WHERE tenant_id = $1', [tenantId]);
  return row.n;
}

/** The status /health/ready answers once it is 200, or the last one when it does not become 200 in time. */
function readiness(api: TestApp): Promise<number> {
  return waitFor(
    async () => (await api.http().get('/health/ready')).status,
    (status) => status === 200,
  );
}

/** A forwarder to the test Redis, started: the tests stop, freeze and restart it to cut the api off. */
async function startRedisForwarder(): Promise<TcpForwarder> {
  const forwarder = new TcpForwarder('127.0.0.1', Number(new URL(TEST_REDIS_URL).port || 6379));
  await forwarder.start();
  return forwarder;
}

/** Waits for the tenant's audit logs to reach `expected`, then says there are exactly that many. */
async function expectLogCount(t: TestApp, tenantId: string, expected: number): Promise<void> {
  expect(
    await waitFor(
      () => countLogs(t.database, tenantId),
      (n) => n >= expected,
    ),
  ).toBe(expected);
}

/** Every committed change logged exactly once: `expected` logs, no entity's operation twice, nothing left in the outbox. */
async function expectLoggedOnce(t: TestApp, tenantId: string, expected: number): Promise<void> {
  await expectLogCount(t, tenantId, expected);
  expect(await duplicatedEntities(t, tenantId)).toBe(0);
  expect(
    await waitFor(
      () => outboxOf(t, tenantId),
      (n) => n === 0,
    ),
  ).toBe(0);
}

describe('audit logs when parts fail (api + worker on real PostgreSQL and Redis)', () => {
  afterAll(() => deleteQueueKeys(prefix));

  it('loses and duplicates nothing when the worker stops while the api takes writes, then comes back', async () => {
    const api = await startReadyApi({ REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: prefix });
    // The relay is out of the way: what the stopped worker missed must wait in the queue and be consumed later.
    let worker = await startWorker({ outboxRelayMinAgeMs: 600_000, outboxRelayIntervalMs: 600_000 });
    try {
      const tenant = await api.tenant();
      const before = createApplications(api, tenant, 0, 24);
      await worker.stop(); // as SIGTERM does, while those writes are going on
      const during = await createApplications(api, tenant, 24, 48);
      const committed = [...(await before), ...during];
      expect(committed).toHaveLength(48);
      worker = await startWorker({ outboxRelayMinAgeMs: 600_000, outboxRelayIntervalMs: 600_000 });

      // The tenant and its first application, then every create.
      await expectLoggedOnce(api, tenant.tenant.id, 2 + committed.length);
    } finally {
      await worker.stop();
      await api.close();
    }
  });

  it('never blocks or fails a write while Redis is unreachable, and logs every committed change once it returns', async () => {
    const forwarder = await startRedisForwarder();
    const api = await startReadyApi({ REDIS_URL: `redis://127.0.0.1:${forwarder.port}/15`, QUEUE_PREFIX: prefix });
    const worker = await startWorker({ outboxRelayMinAgeMs: 1000, outboxRelayIntervalMs: 250 });
    try {
      const tenant = await api.tenant();
      await createApplications(api, tenant, 0, 4);
      await waitFor(
        () => countLogs(api.database, tenant.tenant.id),
        (n) => n >= 6,
      );

      await forwarder.stop();
      const ready = await api.http().get('/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.redis).toBe('down');
      // All at once: without Redis each write also waits out the cache-version bump's retries (persistence).
      const whileDown = await createApplications(api, tenant, 4, 16, 12);
      expect(whileDown).toHaveLength(12);

      await forwarder.start();
      await readiness(api);
      await createApplications(api, tenant, 16, 20);

      await expectLoggedOnce(api, tenant.tenant.id, 2 + 20);
    } finally {
      await worker.stop();
      await api.close();
      await forwarder.stop();
    }
  });

  it("keeps logging the api's writes while another service's malformed job sits in the failed set", async () => {
    const api = await startReadyApi({ REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: prefix });
    const worker = await startWorker({ outboxRelayMinAgeMs: 600_000, outboxRelayIntervalMs: 600_000 });
    const queue = rawQueue(prefix);
    try {
      const tenant = await api.tenant();
      const bad = await queue.add(JobName.AuditLog, {
        tenant_id: tenant.tenant.id,
        entity_type: 'card',
        entity_id: 'card_1',
        operation: 'charge',
        message: 'x',
      });
      await createApplications(api, tenant, 0, 4);
      await expectLogCount(api, tenant.tenant.id, 6);
      expect(
        await waitFor(
          () => queue.getJobState(bad.id!),
          (s) => s === 'failed',
        ),
      ).toBe('failed');
      expect((await queue.getJob(bad.id!))!.failedReason).toBe('invalid audit-log payload: operation: must be one of create, update, delete, read');
    } finally {
      await queue.close();
      await worker.stop();
      await api.close();
    }
  });

  it('logs, through the relay, the writes an api takes before its Redis connection is ready', async () => {
    // The producer's connection hangs in its ready check, as it can for a few hundred ms after a start under load.
    const forwarder = await startRedisForwarder();
    forwarder.freeze();
    const api = await startTestApp({ REDIS_URL: `redis://127.0.0.1:${forwarder.port}/15`, QUEUE_PREFIX: prefix });
    const worker = await startWorker({ outboxRelayMinAgeMs: 1000, outboxRelayIntervalMs: 250 });
    try {
      expect((await api.http().get('/health/ready')).status).toBe(503);
      const tenant = await api.tenant(); // its two events are refused by the producer: left in the outbox
      expect(await outboxOf(api, tenant.tenant.id)).toBe(2);
      forwarder.thaw();
      await createApplications(api, tenant, 0, 4);
      await expectLoggedOnce(api, tenant.tenant.id, 2 + 4);
    } finally {
      await worker.stop();
      await api.close();
      await forwarder.stop();
    }
  });
});
