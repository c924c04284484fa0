import { randomUUID } from 'node:crypto';
import { uniquePrefix } from '@gatehouse/jobs/testing';
import { Collector, startCollector } from '@gatehouse/test-support/otlp-collector';
import { findPlaintext } from '@gatehouse/test-support/plaintext-scan';
import { ServiceProcess, startServiceProcess, WORKER_MAIN } from '@gatehouse/test-support/service-process';
import { TestApp } from '@gatehouse/test-support/test-app';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '@gatehouse/test-support/test-env';
import { HttpReceiver, ReceiverKind } from './support/http-receivers';
import { seedLogs, startStreamApi, STREAM_TEST_ENV, streamRow, until } from './support/stream-harness';
import { makeTestCa, TestCa } from './support/test-ca';

jest.setTimeout(120_000);

/** The forms a secret could leak in: as given, hex, base64, and for a webhook secret its key (base64 and hex). */
function forms(secret: string): string[] {
  const key = secret.startsWith('whsec_') ? [secret.slice(6), Buffer.from(secret.slice(6), 'base64').toString('hex')] : [];
  return [secret, Buffer.from(secret).toString('hex'), Buffer.from(secret).toString('base64'), ...key];
}

/** Which secrets (by index) `text` holds, in any of their forms. */
function leaked(text: string, secrets: string[]): number[] {
  return secrets.flatMap((secret, i) => (forms(secret).some((form) => text.includes(form)) ? [i] : []));
}

/**
 * Stream credentials never leave the places they must be: the built API and worker, at LOG_LEVEL=trace and exporting
 * every span, create and deliver three streams (a webhook signing secret, a Splunk HEC token, a Datadog API key, and a
 * wrong Datadog key first, so the failure path logs too); then no secret, in any form, is in either process's stdout
 * or stderr, in any exported span (raw OTLP bodies: attributes, events, status), in any Redis key or value, or in
 * plaintext in any row of the database. The receivers saw them: the scan's positive control.
 */
describe('log stream secrets: nowhere but the vault and the receiver', () => {
  let ca: TestCa;
  let collector: Collector;
  let app: TestApp;
  let api: ServiceProcess | undefined;
  let worker: ServiceProcess | undefined;
  const receivers: HttpReceiver[] = [];

  beforeAll(async () => {
    ca = makeTestCa();
    collector = await startCollector();
    app = await startStreamApi();
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.stop();
    for (const r of receivers) await r.stop();
    await collector?.close();
    await app?.close();
  });

  it('no credential in the logs, the traces, Redis or the database in plaintext, after delivery and a refused key', async () => {
    const env = {
      ...STREAM_TEST_ENV,
      DATABASE_URL: TEST_DATABASE_URL,
      REDIS_URL: TEST_REDIS_URL,
      QUEUE_PREFIX: uniquePrefix('streamsecrets'),
      LOG_LEVEL: 'trace',
      LOG_STREAM_INTERVAL_MS: '100',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    api = await startServiceProcess(env);
    worker = await startServiceProcess(env, [], WORKER_MAIN, /"msg":"gatehouse worker running"/);
    const receiver = async (kind: ReceiverKind, credential: string) => {
      const r = await new HttpReceiver(kind, ca).start();
      r.credential = credential;
      receivers.push(r);
      return r;
    };
    const token = `hec-${randomUUID()}`;
    const apiKey = `dd-${randomUUID()}`;
    const wrongKey = `dd-wrong-${randomUUID()}`;
    const [webhook, splunk, datadog] = [await receiver('https', ''), await receiver('splunk_hec', token), await receiver('datadog', apiKey)];

    const tenant = await app.tenant();
    await seedLogs(app, tenant, 30);
    const call = async (method: 'POST' | 'PATCH', path: string, body: unknown) => {
      const res = await fetch(`${api!.baseUrl}${path}`, {
        method,
        headers: { 'svc-api-key': tenant.key, 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { id: string; signing_secret?: string } };
    };
    const create = async (kind: string, settings: Record<string, unknown>) => {
      const res = await call('POST', '/logs/streams', { name: kind, kind, settings: { tls_ca: ca.ca, ...settings }, start: 'beginning' });
      expect(res.status).toBe(201);
      return res.body;
    };
    const hook = await create('https', { url: `${webhook.url}/hook` });
    webhook.credential = hook.signing_secret!;
    await create('splunk_hec', { url: splunk.url, token });
    const dd = await create('datadog', { url: datadog.url, api_key: wrongKey });
    // The wrong key first: refused by the receiver, the stream failing, the error logged by the worker.
    await until(
      () => streamRow(app, dd.id),
      (r) => r.last_error !== null,
      20_000,
      'the datadog stream failing',
    );
    expect((await call('PATCH', `/logs/streams/${dd.id}`, { settings: { api_key: apiKey } })).status).toBe(200);
    for (const r of [webhook, splunk, datadog]) {
      await until(
        () => r.records.filter((record) => record.tenant_id === tenant.tenant.id).length,
        (n) => n >= 30,
        30_000,
        `${r.kind} records`,
      );
    }
    await until(
      () => collector.requests(),
      (n) => n > 0,
      10_000,
      'spans exported',
    );
    // Stopped gracefully: what they log and export on the way out is scanned too.
    const [apiProcess, workerProcess] = [api, worker];
    worker = api = undefined;
    await workerProcess.stop();
    await apiProcess.stop();
    const logs = { api: apiProcess.output(), worker: workerProcess.output() };

    const secrets = [hook.signing_secret!, token, apiKey, wrongKey];
    // Positive controls: the receivers were sent every credential and the scan finds them there; the processes
    // logged (at trace, the requests and the deliveries) and exported spans of both services.
    const sent = [webhook, splunk, datadog].map((r) => JSON.stringify(r.requests.map((q) => q.headers))).join('\n') + hook.signing_secret;
    expect(leaked(sent, secrets)).toEqual([0, 1, 2, 3]);
    expect(datadog.refusals.length).toBeGreaterThan(0);
    expect(logs.api).toMatch(/"method":"PATCH","route":"\/logs\/streams\/:id","status":200/);
    expect(logs.worker).toMatch(/"msg":"streamed \d+ log\(s\)"/);
    expect(new Set(collector.spans.map((span) => span.service))).toEqual(new Set(['gatehouse-api', 'gatehouse-worker']));

    expect({
      api: leaked(logs.api, secrets),
      worker: leaked(logs.worker, secrets),
      traces: leaked(collector.bodies.join('\n'), secrets),
    }).toEqual({ api: [], worker: [], traces: [] });
    // Every row of the database and every Redis key and value (hex and base64 forms included by the scan).
    expect(await findPlaintext(app.database.dataSource, TEST_REDIS_URL, [...secrets, ...forms(hook.signing_secret!).slice(3)])).toEqual([]);
  });
});
