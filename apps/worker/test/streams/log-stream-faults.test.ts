import { ServiceProcess, startServiceProcess, WORKER_MAIN } from '@gatehouse/test-support/service-process';
import { TestApp } from '@gatehouse/test-support/test-app';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '@gatehouse/test-support/test-env';
import { uniquePrefix } from '@gatehouse/jobs/testing';
import { checkChain } from './support/chain-check';
import { HttpReceiver } from './support/http-receivers';
import { RunningWorker, seedLogs, startStreamApi, startWorker, STREAM_TEST_ENV, streamRow, until, webhookStream } from './support/stream-harness';
import { makeTestCa, TestCa } from './support/test-ca';

jest.setTimeout(120_000);

/**
 * Log streams under faults, at least once and in chain order: a receiver down for a while and back, a worker killed
 * (SIGKILL) after the receiver stored a batch but before it acknowledged, and two workers sharing one stream.
 */
describe('log stream delivery under faults', () => {
  let ca: TestCa;
  let api: TestApp;

  beforeAll(async () => {
    ca = makeTestCa();
    api = await startStreamApi();
  });
  afterAll(() => api?.close());

  it('the receiver down for a while and back: nothing lost, nothing out of order', async () => {
    const worker = await startWorker();
    const receiver = await new HttpReceiver('https', ca).start();
    try {
      const tenant = await api.tenant();
      await seedLogs(api, tenant, 50, 'before');
      const id = await webhookStream(api, tenant, receiver, ca, 25);
      await until(
        () => receiver.records.length,
        (n) => n >= 50,
        20_000,
        'the first logs',
      );
      const port = receiver.port;
      await receiver.stop();
      await seedLogs(api, tenant, 100, 'while down');
      // The worker keeps trying, backing off, and says why.
      const failing = await until(
        () => streamRow(api, id),
        (r) => r.failures >= 3,
        20_000,
        'failed attempts',
      );
      expect(failing.last_error).toMatch(/ECONNREFUSED/);
      expect(failing.position).toBe(50);
      const shown = await api.http().get(`/logs/streams/${id}`).set('SVC-API-KEY', tenant.key).expect(200);
      expect(shown.body).toMatchObject({ state: 'failing', lag: { logs: 100 } });
      await receiver.start(port);
      await until(
        () => streamRow(api, id),
        (r) => r.position >= 150 && r.last_error === null,
        20_000,
        'catching up',
      );
      const row = await streamRow(api, id);
      const check = checkChain(receiver.records);
      expect(check.problems).toEqual([]);
      // The 150 seeded logs (and whatever the relay chained after them): every position once, from 1, in order.
      expect(check.positions).toEqual(Array.from({ length: row.position }, (_, i) => i + 1));
      // Whatever arrived twice is counted, exactly.
      expect(row.redelivered).toBe(check.duplicates);
    } finally {
      await receiver.stop();
      await worker.stop();
    }
  });

  it('the worker killed mid-batch: the batch is sent again (duplicates counted), no gap', async () => {
    const receiver = await new HttpReceiver('https', ca).start();
    const tenant = await api.tenant();
    await seedLogs(api, tenant, 60);
    let release: () => void = () => undefined;
    let killed: ServiceProcess | undefined;
    try {
      // The second batch is stored by the receiver and its answer held back: the worker dies waiting for it.
      receiver.holdAfterStore = (body) =>
        (JSON.parse(body) as { data: { records: { position: number }[] } }).data.records[0]!.position === 21
          ? new Promise<void>((resolve) => (release = resolve))
          : Promise.resolve();
      const id = await webhookStream(api, tenant, receiver, ca, 20);
      killed = await startServiceProcess(
        {
          ...STREAM_TEST_ENV,
          DATABASE_URL: TEST_DATABASE_URL,
          REDIS_URL: TEST_REDIS_URL,
          QUEUE_PREFIX: uniquePrefix('streamkill'),
          LOG_STREAM_INTERVAL_MS: '100',
        },
        [],
        WORKER_MAIN,
        /"msg":"gatehouse worker running"/,
      );
      await until(
        () => receiver.records.length,
        (n) => n >= 40,
        30_000,
        'the second batch stored',
      );
      expect(await killed.stop('SIGKILL')).toBeNull();
      release();
      receiver.holdAfterStore = undefined;
      const before = await streamRow(api, id);
      expect(before.position).toBe(20);
      // The dead worker's lease (30 s) runs out; fast-forwarded here rather than waited for.
      await api.database.dataSource.query(`UPDATE log_streams SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
      const worker = await startWorker();
      try {
        await until(
          () => streamRow(api, id),
          (r) => r.position >= 60,
          20_000,
          'the rest delivered',
        );
      } finally {
        await worker.stop();
      }
      const check = checkChain(receiver.records);
      expect(check.problems).toEqual([]);
      // The 60 seeded logs, and whatever the workers' outbox relay chained after them meanwhile (the stream's own
      // creation, the tenant's): every position once, from 1.
      const { position } = await streamRow(api, id);
      expect(check.positions).toEqual(Array.from({ length: position }, (_, i) => i + 1));
      // Positions 21-40 arrived twice, and the stream counted exactly those.
      expect(check.duplicates).toBe(20);
      expect((await streamRow(api, id)).redelivered).toBe(20);
      const shown = await api.http().get(`/logs/streams/${id}`).set('SVC-API-KEY', tenant.key).expect(200);
      expect(shown.body).toMatchObject({ delivered: position, redelivered: 20, state: 'active' });
    } finally {
      release();
      await killed?.stop('SIGKILL');
      await receiver.stop();
    }
  });

  it('two workers on one stream never deliver it at once (the lease), and deliver it whole', async () => {
    const receiver = await new HttpReceiver('https', ca).start();
    const workers: RunningWorker[] = [await startWorker(), await startWorker()];
    try {
      // A slow receiver: a batch takes 30 ms, long enough for the other worker to try.
      receiver.hold = () => new Promise((r) => setTimeout(r, 30));
      const tenant = await api.tenant();
      await seedLogs(api, tenant, 200);
      const id = await webhookStream(api, tenant, receiver, ca, 10);
      await until(
        () => streamRow(api, id),
        (r) => r.position === 200,
        30_000,
        'all delivered',
      );
      expect(receiver.maxInFlight).toBe(1);
      const check = checkChain(receiver.records);
      expect(check.problems).toEqual([]);
      expect(check.positions).toHaveLength(200);
      expect(check.duplicates).toBe(0);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      await receiver.stop();
    }
  });
});
