import './tracing-preload';
import 'reflect-metadata';
import { createServer } from 'node:http';
import { JsonLogger, createRootLogger } from './http/json-logger';
import { createApiApp } from './app';
import { answerClientErrors } from './http/client-errors';
import { ensureFirstTenant, firstKeyBanner, loadConfigOrExit, openMigratedDatabase } from './bootstrap';
import { BackgroundJobs } from '@gatehouse/queue';
import { createMetricsRegistry, metricsPortOf, startMetricsServer, traceJobs } from '@gatehouse/runtime';
import { stopTracing } from '@gatehouse/runtime/tracing';

const SHUTDOWN_GRACE_MS = 25_000;

async function main(): Promise<void> {
  const apiOnly = process.argv.includes('--api-only');
  const config = loadConfigOrExit();
  const root = createRootLogger(config.logLevel);
  const database = await openMigratedDatabase(config, root, 'gatehouse-api');
  // Without Redis there is no queue to share: the worker's jobs run here (CONTRACT.md section 10).
  const runJobs = !apiOnly && !config.redisUrl;
  const metrics = config.metricsPort === undefined ? undefined : createMetricsRegistry('gatehouse-api');
  const app = await createApiApp({ config, database, runJobs, logger: new JsonLogger(root), accessLog: root, metrics });
  traceJobs(app.get(BackgroundJobs).parts.runner?.registry);
  if (metrics) {
    const metricsServer = await startMetricsServer(metrics, config.metricsPort!);
    root.info({ metrics_port: metricsPortOf(metricsServer) }, 'metrics listening on /metrics');
  }

  const created = await ensureFirstTenant(app);
  // On stderr, never in the JSON log stream (stdout), which log shippers collect and keep.
  if (created) process.stderr.write(firstKeyBanner(created).replace('PORT', String(config.port)));

  const server = createServer({ keepAliveTimeout: 65_000 }, app.getHttpAdapter().getInstance());
  answerClientErrors(server, (refusal) => root.info(refusal, 'request refused before routing'));
  await new Promise<void>((resolve) => server.listen(config.port, resolve));
  const address = server.address();
  root.info({ port: typeof address === 'object' && address ? address.port : config.port, embedded_database: database.embedded, jobs_in_process: runJobs }, 'gatehouse api listening');

  let stopping = false;
  // While draining, answers tell keep-alive clients to reconnect elsewhere.
  server.on('request', (_req, res) => stopping && res.setHeader('connection', 'close'));
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    root.info({ signal }, 'draining in-flight requests');
    // close() stops accepting and calls back once every connection is gone: idle keep-alive sockets are closed as
    // soon as they become idle, and whatever is still open after the grace period is cut.
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    const force = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    server.close(async () => {
      clearInterval(sweep);
      clearTimeout(force);
      await app.close();
      await database.close();
      await stopTracing();
      root.info('stopped');
      root.flush();
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error) => {
  process.stderr.write(`gatehouse: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
