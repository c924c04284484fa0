import './tracing-preload';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { BackgroundJobs, RedisHealth } from '@gatehouse/jobs';
import {
  createJsonRootLogger,
  createMetricsRegistry,
  JsonLogger,
  loadConfigOrExit,
  metricsPortOf,
  openMigratedDatabase,
  registerBackgroundMetrics,
  registerDependencyMetrics,
  startMetricsServer,
  stopOnSignals,
  traceJobs,
  verifyVaultKeys,
} from '@gatehouse/runtime';
import { OWNER_ONLY_UMASK } from '@gatehouse/config';
import { registerHeartbeatMetric, startHeartbeat } from './heartbeat';
import { workerConfigProblem } from './worker-config';
import { WorkerModule } from './worker.module';

async function main(): Promise<void> {
  // Before anything writes a file (the generated signing key, the heartbeat): the owner's only.
  process.umask(OWNER_ONLY_UMASK);
  const config = loadConfigOrExit();
  const problem = workerConfigProblem(config);
  if (problem) {
    process.stderr.write(`gatehouse worker: ${problem}\n`);
    process.exit(1);
  }
  const root = createJsonRootLogger(config.logLevel, undefined, undefined, 'gatehouse-worker');
  const database = await openMigratedDatabase(config, root, 'gatehouse-worker');
  const app = await NestFactory.createApplicationContext(WorkerModule.register({ config, database }), {
    logger: new JsonLogger(root),
    abortOnError: false,
  });
  await verifyVaultKeys(app, config, root);
  traceJobs(app.get(BackgroundJobs).parts.runner?.registry);
  if (config.metricsPort !== undefined) {
    const metrics = createMetricsRegistry('gatehouse-worker');
    registerBackgroundMetrics(metrics, app.get(BackgroundJobs), app.get(DataSource));
    registerDependencyMetrics(metrics, app.get(DataSource), app.get(RedisHealth));
    registerHeartbeatMetric(metrics);
    const metricsServer = await startMetricsServer(metrics, config.metricsPort, config.metricsHost);
    root.info({ metrics_host: config.metricsHost, metrics_port: metricsPortOf(metricsServer) }, 'metrics listening on /metrics');
  }
  const redis = app.get(RedisHealth);
  const dataSource = app.get(DataSource);
  const stopHeartbeat = startHeartbeat(async () => (await redis.ping()) && (await dataSource.query('SELECT 1').then(() => true)));
  root.info({ queue_prefix: config.queuePrefix, ready_in_ms: Math.round(performance.now()) }, 'gatehouse worker running');

  // Closing the context (after drain) stops taking jobs, lets the running ones commit their logs, then disconnects.
  stopOnSignals(root, app, database, async (signal) => {
    root.info({ signal }, 'draining jobs');
    stopHeartbeat();
  });
}

main().catch((error) => {
  process.stderr.write(`gatehouse worker: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
