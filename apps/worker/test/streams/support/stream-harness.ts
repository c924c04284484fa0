import { randomUUID } from 'node:crypto';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@gatehouse/config';
import { AuditEvent, CreatedTenant, LogChainWriter, LogStreamDeliveryOptions } from '@gatehouse/domain';
import { Database, openDatabase } from '@gatehouse/persistence';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { TEST_DATABASE_URL, TEST_LOG_SIGNING_KEY, TEST_REDIS_URL, TEST_VAULT_KEY } from '@gatehouse/test-support/test-env';
import { WorkerModule } from '../../../src/worker.module';
import { uniquePrefix } from '@gatehouse/jobs/testing';
import type { HttpReceiver } from './http-receivers';
import type { TestCa } from './test-ca';

/** What the stream tests' processes share: loopback receivers allowed (as the proxy tests do), plain syslog allowed. */
export const STREAM_TEST_ENV = {
  PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
  LOG_STREAM_ALLOW_PLAIN_SYSLOG: 'true',
  LOG_SIGNING_KEY: TEST_LOG_SIGNING_KEY,
  VAULT_KEY: TEST_VAULT_KEY,
};

/** Seconds, not minutes: short backoff and polling for the tests. */
export const FAST_STREAMS: Partial<LogStreamDeliveryOptions> & { intervalMs: number } = {
  intervalMs: 100,
  backoffBaseMs: 100,
  backoffMaxMs: 500,
  leaseMs: 30_000,
};

export interface RunningWorker {
  context: INestApplicationContext;
  stop(): Promise<void>;
}

/** The worker as `npm run start:worker` runs it (WorkerModule), in this process. */
export async function startWorker(
  streams: Partial<LogStreamDeliveryOptions> & { intervalMs?: number } = FAST_STREAMS,
  databaseUrl = TEST_DATABASE_URL,
): Promise<RunningWorker> {
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: uniquePrefix('streams'),
    LOG_LEVEL: 'silent',
    ...STREAM_TEST_ENV,
  });
  const database: Database = await openDatabase({ url: databaseUrl, dataDir: '', poolSize: 4 });
  // The outbox relay only at start: the tests' own API events (tenant and stream creations) stay out of the chains they
  // count, which hold the seeded logs alone.
  const jobs = { outboxRelayIntervalMs: 3_600_000 };
  const context = await NestFactory.createApplicationContext(WorkerModule.register({ config, database, jobs, streams }), { logger: false });
  return {
    context,
    stop: async () => {
      await context.close();
      await database.close();
    },
  };
}

export async function startStreamApi(databaseUrl?: string): Promise<TestApp> {
  return startTestApp(databaseUrl ? { ...STREAM_TEST_ENV, DATABASE_URL: databaseUrl } : STREAM_TEST_ENV);
}

/** An https stream of the tenant from position 1 to `receiver` (trusting `ca`), its signing secret given to the receiver. */
export async function webhookStream(api: TestApp, tenant: CreatedTenant, receiver: HttpReceiver, ca: TestCa, batchSize: number): Promise<string> {
  const res = await api
    .http()
    .post('/logs/streams')
    .set('SVC-API-KEY', tenant.key)
    .send({ name: 'faults', kind: 'https', settings: { url: `${receiver.url}/hook`, tls_ca: ca.ca, batch_size: batchSize }, start: 'beginning' });
  if (res.status !== 201) throw new Error(`creating the stream answered ${res.status}: ${JSON.stringify(res.body)}`);
  receiver.credential = res.body.signing_secret;
  return res.body.id;
}

/** `count` logs of the tenant written as the worker writes them (chained), in one append. */
export async function seedLogs(api: TestApp, tenant: CreatedTenant, count: number, label = 'seed'): Promise<AuditEvent[]> {
  const logs: AuditEvent[] = Array.from({ length: count }, (_, i) => ({
    id: randomUUID(),
    tenantId: tenant.tenant.id,
    actorId: i % 3 === 0 ? randomUUID() : null,
    actorType: i % 3 === 0 ? 'application' : 'system',
    entityType: 'application',
    entityId: `app-${i}`,
    operation: 'update',
    message: `${label} ${i}: ünïcode ✓ "quoted" ]bracket\\`,
    createdAt: new Date(Date.now() - 1000 + i),
    ...(i % 2 === 0 ? { requestId: `req-${i}`, sourceIp: '203.0.113.7', userAgent: 'jest' } : {}),
  }));
  await api.app.get(LogChainWriter).append(logs);
  return logs;
}

/** Polls until `done` holds (every 50 ms), or fails with what it last saw. */
export async function until<T>(probe: () => T | Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)?.slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function streamRow(
  api: TestApp,
  id: string,
): Promise<{ position: number; delivered: number; redelivered: number; last_error: string | null; failures: number }> {
  const [row] = await api.database.dataSource.query(
    `SELECT "position"::int AS position, delivered::int AS delivered, redelivered::int AS redelivered, last_error, failures FROM log_streams WHERE id = $1`,
    [id],
  );
  return row;
}
