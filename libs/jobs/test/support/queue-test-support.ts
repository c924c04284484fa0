import { DynamicModule, INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import { loadConfig } from '@gatehouse/config';
import { Database, openDatabase } from '@gatehouse/persistence';
import { BackgroundJobs, BackgroundJobsOptions, QueueName, RedisHealth } from '@gatehouse/jobs';
import { persistenceAndJobsModules } from '@gatehouse/runtime';
import { TEST_DATABASE_URL, TEST_LOG_SIGNING_KEY, TEST_REDIS_URL, TEST_VAULT_KEY } from '@gatehouse/test-support/test-env';
import { testKeyWrapper } from '@gatehouse/test-support/test-vault';

/** Queue keys of one test file alone: parallel runs and earlier runs cannot see each other's jobs. */
export function uniquePrefix(name: string): string {
  return `gh-test-${name}-${process.pid}-${Date.now().toString(36)}`;
}

export async function deleteQueueKeys(prefix: string): Promise<void> {
  const redis = new IORedis(TEST_REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** A BullMQ queue handle as another service would hold one. */
export function rawQueue(prefix: string, name: QueueName = QueueName.AuditLogs): Queue {
  return new Queue(name, { connection: { url: TEST_REDIS_URL }, prefix });
}

export async function waitFor<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Until the producer's Redis connection is ready (what /health/ready waits for): a publish before that is refused at
 * once and its events are left to the outbox relay, which tests that push the relay out of the way would never see
 * logged. Under load the connection takes a few hundred ms, longer than a first write.
 */
export async function producerReady(context: INestApplicationContext): Promise<void> {
  const health = context.get(RedisHealth);
  if (!(await waitFor(() => health.ping(), (up) => up))) throw new Error('the producer did not connect to Redis');
}

export async function countLogs(database: Database, tenantId: string): Promise<number> {
  const [row] = await database.dataSource.query('SELECT count(*)::int AS n FROM logs WHERE tenant_id = $1', [tenantId]);
  return row.n;
}

/** Where jobs run or not (`runJobs`), and tuning beyond the test configuration. */
export type JobsHostOptions = Partial<BackgroundJobsOptions> & { runJobs: boolean };

@Module({})
class JobsHostModule {
  static register(database: Database, options: JobsHostOptions): DynamicModule {
    // Wired as the api and the worker wire them, over the test configuration.
    const config = loadConfig({ DATABASE_URL: TEST_DATABASE_URL, LOG_LEVEL: 'silent', LOG_SIGNING_KEY: TEST_LOG_SIGNING_KEY, VAULT_KEY: TEST_VAULT_KEY });
    return {
      module: JobsHostModule,
      imports: persistenceAndJobsModules(database, config, { runJobs: options.runJobs, jobs: options, keyWrapper: testKeyWrapper() }),
    };
  }
}

export interface JobsHost {
  context: INestApplicationContext;
  database: Database;
  jobs: BackgroundJobs;
  close(): Promise<void>;
}

/** The background-jobs module over its own connection pool, as the worker (or an api without Redis) runs it. */
export async function startJobsHost(options: JobsHostOptions): Promise<JobsHost> {
  const database = await openDatabase({ url: TEST_DATABASE_URL, dataDir: '', poolSize: 4 });
  const context = await NestFactory.createApplicationContext(JobsHostModule.register(database, options), {
    logger: false,
  });
  if (options.redisUrl) await producerReady(context);
  return {
    context,
    database,
    jobs: context.get(BackgroundJobs),
    close: async () => {
      await context.close();
      await database.close();
    },
  };
}
