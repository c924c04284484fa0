import { DynamicModule, INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@gatehouse/config';
import { Database, openDatabase } from '@gatehouse/persistence';
import { BackgroundJobs, BackgroundJobsOptions, RedisHealth } from '@gatehouse/jobs';
import { waitFor } from '@gatehouse/jobs/testing';
import { persistenceAndJobsModules } from '@gatehouse/runtime';
import { TEST_DATABASE_URL, TEST_LOG_SIGNING_KEY, TEST_VAULT_KEY } from './test-env';
import { testKeyWrapper } from './test-vault';

// Here, not in the jobs library's test support: the wiring is the runtime's, and the runtime imports the jobs library.

/**
 * Until the producer's Redis connection is ready (what /health/ready waits for): a publish before that is refused at
 * once and its events are left to the outbox relay, which tests that push the relay out of the way would never see
 * logged. Under load the connection takes a few hundred ms, longer than a first write.
 */
export async function producerReady(context: INestApplicationContext): Promise<void> {
  const health = context.get(RedisHealth);
  if (
    !(await waitFor(
      () => health.ping(),
      (up) => up,
    ))
  )
    throw new Error('the producer did not connect to Redis');
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
