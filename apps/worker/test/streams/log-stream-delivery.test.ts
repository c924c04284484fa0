import { CreatedTenant } from '@gatehouse/domain';
import { TestApp } from '@gatehouse/test-support/test-app';
import { checkChain } from './support/chain-check';
import { HttpReceiver, ReceiverKind } from './support/http-receivers';
import { RsyslogReceiver, rsyslogAvailable } from './support/rsyslog-receiver';
import { RunningWorker, seedLogs, startStreamApi, startWorker, streamRow, until } from './support/stream-harness';
import { makeTestCa, TestCa } from './support/test-ca';

jest.setTimeout(90_000);

/**
 * Log streams delivered by the worker to real receivers started here: HTTPS servers speaking the Standard Webhooks,
 * Splunk HEC and Datadog intake contracts (each checking the credential and the format a real one checks) and
 * Debian's rsyslogd over TLS with a test CA and over plain TCP. Each receiver verifies the chain from the records alone.
 */
describe('log stream delivery', () => {
  let ca: TestCa;
  let api: TestApp;
  let worker: RunningWorker;

  beforeAll(async () => {
    ca = makeTestCa();
    api = await startStreamApi();
    worker = await startWorker();
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
  });

  async function createStream(tenant: CreatedTenant, kind: string, settings: Record<string, unknown>): Promise<{ id: string; signing_secret?: string }> {
    const res = await api
      .http()
      .post('/logs/streams')
      .set('SVC-API-KEY', tenant.key)
      .send({ name: kind, kind, settings: { tls_ca: ca.ca, ...settings }, start: 'beginning' });
    expect(res.status).toBe(201);
    return res.body;
  }

  const credentials: Record<ReceiverKind, (receiver: HttpReceiver) => Record<string, unknown>> = {
    https: () => ({}),
    splunk_hec: (r) => ({ token: r.credential, index: 'audit', batch_size: 40 }),
    datadog: (r) => ({ api_key: r.credential, tags: 'env:test', batch_size: 40 }),
  };

  it.each(['https', 'splunk_hec', 'datadog'] as ReceiverKind[])('%s: every log once, in chain order, verifiable by the receiver', async (kind) => {
    const receiver = await new HttpReceiver(kind, ca).start();
    try {
      receiver.credential = kind === 'https' ? '' : `secret-${kind}-${Date.now()}`;
      const tenant = await api.tenant();
      await seedLogs(api, tenant, 130);
      const stream = await createStream(tenant, kind, { url: kind === 'https' ? `${receiver.url}/hook` : receiver.url, ...credentials[kind](receiver) });
      if (kind === 'https') receiver.credential = stream.signing_secret!;
      await until(
        () => receiver.records.length,
        (n) => n >= 130,
        20_000,
        `${kind} records`,
      );
      const check = checkChain(receiver.records);
      expect(check.problems).toEqual([]);
      expect(check.positions).toEqual(Array.from({ length: 130 }, (_, i) => i + 1));
      expect(check.duplicates).toBe(0);
      expect(receiver.refusals).toEqual([]);
      // Every batch (four of them for splunk_hec and datadog) over one kept connection.
      expect(receiver.requests.length).toBeGreaterThanOrEqual(kind === 'https' ? 1 : 4);
      expect(receiver.connections).toBe(1);
      const row = await until(
        () => streamRow(api, stream.id),
        (r) => r.position === 130,
        5000,
        'acknowledged position',
      );
      expect(row).toMatchObject({ delivered: 130, redelivered: 0, last_error: null });
      if (kind === 'https') {
        const { headers } = receiver.requests[0]!;
        expect(headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}_1_\d+$/);
        expect(headers['webhook-signature']).toMatch(/^v1,/);
      }
      // The API shows it caught up.
      const shown = await api.http().get(`/logs/streams/${stream.id}`).set('SVC-API-KEY', tenant.key).expect(200);
      expect(shown.body).toMatchObject({ state: 'active', position: 130, head_position: 130, lag: { logs: 0, seconds: null }, delivered: 130 });
      expect(shown.body.last_synced_at).toEqual(expect.any(String));
    } finally {
      await receiver.stop();
    }
  });

  it('a receiver that refuses the credential: failing with the last error, nothing acknowledged, no secret in the error', async () => {
    const receiver = await new HttpReceiver('splunk_hec', ca).start();
    try {
      receiver.credential = 'the-right-token';
      const tenant = await api.tenant();
      await seedLogs(api, tenant, 5);
      const stream = await createStream(tenant, 'splunk_hec', { url: receiver.url, token: 'a-wrong-token' });
      const row = await until(
        () => streamRow(api, stream.id),
        (r) => r.last_error !== null,
        10_000,
        'a failure',
      );
      expect(row.position).toBe(0);
      expect(row.last_error).toBe('the receiver answered HTTP 401 Unauthorized');
      const shown = await api.http().get(`/logs/streams/${stream.id}`).set('SVC-API-KEY', tenant.key).expect(200);
      expect(shown.body).toMatchObject({ state: 'failing', last_error: 'the receiver answered HTTP 401 Unauthorized', lag: { logs: 5 } });
      // The right token: retried at once, delivered.
      await api
        .http()
        .patch(`/logs/streams/${stream.id}`)
        .set('SVC-API-KEY', tenant.key)
        .set('content-type', 'application/merge-patch+json')
        .send(JSON.stringify({ settings: { token: 'the-right-token' } }))
        .expect(200);
      await until(
        () => streamRow(api, stream.id),
        (r) => r.position === 5 && r.last_error === null,
        10_000,
        'recovery',
      );
      expect(checkChain(receiver.records).problems).toEqual([]);
    } finally {
      await receiver.stop();
    }
  });

  it('a paused stream sends nothing, and resumes where it stopped', async () => {
    const receiver = await new HttpReceiver('datadog', ca).start();
    try {
      receiver.credential = 'dd-key';
      const tenant = await api.tenant();
      const stream = await createStream(tenant, 'datadog', { url: receiver.url, api_key: 'dd-key' });
      await api.http().post(`/logs/streams/${stream.id}/pause`).set('SVC-API-KEY', tenant.key).expect(200);
      await seedLogs(api, tenant, 10);
      await new Promise((r) => setTimeout(r, 600));
      expect(receiver.records).toHaveLength(0);
      await api.http().post(`/logs/streams/${stream.id}/resume`).set('SVC-API-KEY', tenant.key).expect(200);
      await until(
        () => receiver.records.length,
        (n) => n >= 10,
        10_000,
        'records after resume',
      );
      expect(checkChain(receiver.records).positions).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    } finally {
      await receiver.stop();
    }
  });

  const syslog = rsyslogAvailable() ? it.each([true, false]) : it.skip.each([true, false]);
  syslog('syslog to rsyslogd (tls %s): RFC 5424, octet-counted, every log once in chain order', async (tls) => {
    const receiver = await new RsyslogReceiver(ca, tls).start();
    try {
      const tenant = await api.tenant();
      await seedLogs(api, tenant, 120);
      const stream = await createStream(tenant, 'syslog', { host: '127.0.0.1', port: receiver.port, tls, batch_size: 50, ...(tls ? {} : { tls_ca: null }) });
      await until(
        () => receiver.messages().length,
        (n) => n >= 120,
        20_000,
        'syslog messages',
      );
      const messages = receiver.messages();
      const check = checkChain(messages.map((m) => m.record));
      expect(check.problems).toEqual([]);
      expect(check.positions).toHaveLength(120);
      for (const m of messages) {
        expect(m.record.position).toBe(m.position);
        expect(m.record.hash).toBe(m.hash);
        // <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [SD]: facility 13 (log audit), severity notice.
        expect(m.header).toMatch(/^<109>1 \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z gatehouse gatehouse - update \[gatehouse@32473 /);
      }
      await until(
        () => streamRow(api, stream.id),
        (r) => r.position === 120,
        5000,
        'acknowledged position',
      );
    } finally {
      await receiver.stop();
    }
  });

  it('syslog over TLS refuses a receiver whose certificate the stream does not trust', async () => {
    if (!rsyslogAvailable()) return;
    const receiver = await new RsyslogReceiver(ca, true).start();
    try {
      const tenant = await api.tenant();
      await seedLogs(api, tenant, 3);
      const stream = await createStream(tenant, 'syslog', { host: '127.0.0.1', port: receiver.port, tls_ca: null });
      const row = await until(
        () => streamRow(api, stream.id),
        (r) => r.last_error !== null,
        10_000,
        'a TLS failure',
      );
      expect(row.last_error).toMatch(/self-signed|unable to (get|verify)|certificate/i);
      expect(receiver.messages()).toHaveLength(0);
    } finally {
      await receiver.stop();
    }
  });
});
