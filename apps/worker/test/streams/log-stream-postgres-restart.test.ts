import { PrivatePostgres, startMigratedPrivatePostgres } from '@gatehouse/test-support/private-postgres';
import { TestApp } from '@gatehouse/test-support/test-app';
import { checkChain } from './support/chain-check';
import { HttpReceiver } from './support/http-receivers';
import { RunningWorker, seedLogs, startStreamApi, startWorker, streamRow, until, webhookStream } from './support/stream-harness';
import { makeTestCa, TestCa } from './support/test-ca';

// initdb, and a PostgreSQL stopped and started again.
jest.setTimeout(180_000);

/**
 * A log stream across a PostgreSQL restart (a cluster of this test's own, stopped for real with a fast shutdown while
 * the worker delivers): the worker survives it, resumes from the last acknowledged position as soon as PostgreSQL is
 * back (not once the lease it held expires), and the receiver ends with every log in chain order, whatever it got
 * twice counted.
 */
describe('log stream delivery across a PostgreSQL restart', () => {
  let pg: PrivatePostgres;
  let ca: TestCa;
  let api: TestApp;
  let worker: RunningWorker;
  let receiver: HttpReceiver;

  beforeAll(async () => {
    pg = await startMigratedPrivatePostgres();
    ca = makeTestCa();
    api = await startStreamApi(pg.url);
    worker = await startWorker(undefined, pg.url);
    receiver = await new HttpReceiver('https', ca).start();
  });
  afterAll(async () => {
    await receiver?.stop();
    await worker?.stop().catch(() => undefined);
    await api?.close().catch(() => undefined);
    pg?.remove();
  });

  it('resumes where the receiver acknowledged: nothing lost, nothing out of order', async () => {
    const tenant = await api.tenant();
    await seedLogs(api, tenant, 200, 'before');
    // A slow receiver (20 ms a batch of 10): the restart lands mid-stream.
    receiver.hold = () => new Promise((r) => setTimeout(r, 20));
    const id = await webhookStream(api, tenant, receiver, ca, 10);
    await until(
      () => receiver.records.length,
      (n) => n >= 30,
      30_000,
      'the first batches',
    );
    pg.stopFast();
    const stoppedAt = receiver.records.length;
    await new Promise((r) => setTimeout(r, 1500));
    pg.start();
    receiver.hold = undefined;
    // The API's pool reconnects on its next query; more logs after the restart.
    await until(
      async () =>
        seedLogs(api, tenant, 50, 'after').then(
          () => true,
          () => false,
        ),
      (ok) => ok,
      30_000,
      'the API writing again',
    );
    // Caught up: the seeded logs, and whatever was chained after them meanwhile (the stream's own creation).
    const shown = await until(
      async () =>
        (await api.http().get(`/logs/streams/${id}`).set('SVC-API-KEY', tenant.key)).body as { state: string; position: number; lag: { logs: number } },
      (body) => body.position >= 250 && body.lag?.logs === 0,
      // Well within the stream's 30 s lease, which the worker held when PostgreSQL went: it takes its own lease back.
      15_000,
      'the stream catching up',
    );
    expect(shown.state).toBe('active');
    expect(stoppedAt).toBeLessThan(250);
    const check = checkChain(receiver.records);
    expect(check.problems).toEqual([]);
    expect(check.positions).toEqual(Array.from({ length: shown.position }, (_, i) => i + 1));
    expect((await streamRow(api, id)).redelivered).toBe(check.duplicates);
  });
});
