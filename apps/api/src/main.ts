import './tracing-preload';
import 'reflect-metadata';
import { createServer, RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JsonLogger, createRootLogger } from './http/json-logger';
import { createApiApp } from './app';
import { answerClientErrors } from './http/client-errors';
import { ensureFirstTenant, firstKeyBanner, loadConfigOrExit, openMigratedDatabase } from './bootstrap';
import { BackgroundJobs } from '@gatehouse/jobs';
import { createMetricsRegistry, metricsPortOf, startMetricsServer, stopOnSignals, traceJobs, verifyVaultKeys } from '@gatehouse/runtime';
import { serveControlSocket } from './cli/control-socket';
import { execute } from './cli/execute';
import { Draining } from './health/draining';
import { OWNER_ONLY_UMASK } from '@gatehouse/config';
import { consoleListener, Origins } from './http/console-origin';

const SHUTDOWN_GRACE_MS = 25_000;

async function main(): Promise<void> {
  // Before anything writes a file: the database's files, the generated key, the sockets are the owner's only.
  process.umask(OWNER_ONLY_UMASK);
  const apiOnly = process.argv.includes('--api-only');
  const config = loadConfigOrExit();
  const root = createRootLogger(config.logLevel);
  const database = await openMigratedDatabase(config, root, 'gatehouse-api');
  // Without Redis there is no queue to share: the worker's jobs run here (CONTRACT.md section 10).
  const runJobs = !apiOnly && !config.redisUrl;
  const metrics = config.metricsPort === undefined ? undefined : createMetricsRegistry('gatehouse-api');
  const origins = new Origins(config);
  const app = await createApiApp({ config, database, runJobs, logger: new JsonLogger(root), accessLog: root, metrics, origins });
  await verifyVaultKeys(app, config, root);
  traceJobs(app.get(BackgroundJobs).parts.runner?.registry);
  if (metrics) {
    const metricsServer = await startMetricsServer(metrics, config.metricsPort!, config.metricsHost);
    root.info({ metrics_host: config.metricsHost, metrics_port: metricsPortOf(metricsServer) }, 'metrics listening on /metrics');
  }

  const handler = app.getHttpAdapter().getInstance();
  const listen = async (port: number, listener: RequestListener): Promise<Server> => {
    const server = createServer({ keepAliveTimeout: 65_000 }, listener);
    answerClientErrors(server, (refusal) => root.info(refusal, 'request refused before routing'));
    await new Promise<void>((resolve) => server.listen(port, resolve));
    return server;
  };
  const server = await listen(config.port, handler);
  origins.apiPort = (server.address() as AddressInfo).port;
  // The console on an origin of its own (docs/security.md, "Origins"): never /proxy's.
  const consoleServer = config.consolePort === undefined ? undefined : await listen(config.consolePort, consoleListener(handler));
  const servers = consoleServer ? [server, consoleServer] : [server];
  if (consoleServer) origins.consolePort = (consoleServer.address() as AddressInfo).port;
  const consoleUrl = consoleServer ? `${config.consolePublicUrl ?? `http://localhost:${origins.consolePort}`}/console/` : undefined;
  root.info(
    { console_port: origins.consolePort ?? null, console_url: consoleUrl ?? null },
    consoleUrl ? 'console listening' : 'console off (CONSOLE_PORT=off)',
  );

  const created = await ensureFirstTenant(app, config.bootstrapManagementKey);
  if (created && config.bootstrapManagementKey) {
    // The operator holds the key already: it is never printed, only its hash was stored.
    root.info({ tenant_id: created.tenant.id }, "tenant 'default' created with the management key of BOOTSTRAP_MANAGEMENT_KEY_FILE");
  } else if (created) {
    // On stderr, never in the JSON log stream (stdout), which log shippers collect and keep.
    process.stderr.write(firstKeyBanner(created, origins.apiPort, consoleUrl));
  }
  // The CLI's commands run in this process while it owns the embedded database (cli/control-socket.ts).
  const control = database.controlSocketPath
    ? await serveControlSocket(database.controlSocketPath, (argv) =>
        execute(argv, { open: async () => ({ app, database, config, migrationsApplied: [] }), close: async () => undefined }),
      )
    : undefined;
  root.info(
    {
      port: origins.apiPort,
      embedded_database: database.embedded,
      jobs_in_process: runJobs,
      // From the start of this process: what a restart costs (the build, if any, ran before it).
      ready_in_ms: Math.round(performance.now()),
    },
    'gatehouse api listening',
  );

  let stopping = false;
  // While draining, answers tell keep-alive clients to reconnect elsewhere.
  for (const listening of servers) listening.on('request', (_req, res) => stopping && !res.headersSent && res.setHeader('connection', 'close'));
  stopOnSignals(root, app, database, async (signal) => {
    stopping = true;
    // Readiness fails first; requests are still served for SHUTDOWN_DELAY_MS, time for load balancers to notice.
    app.get(Draining).begin();
    root.info({ signal, delay_ms: config.shutdownDelayMs }, 'draining: /health/ready answers 503');
    if (config.shutdownDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, config.shutdownDelayMs));
    root.info('draining in-flight requests');
    control?.close();
    // close() stops accepting and calls back once every connection is gone: idle keep-alive sockets are closed as
    // soon as they become idle, and whatever is still open after the grace period is cut.
    const sweep = setInterval(() => servers.forEach((s) => s.closeIdleConnections()), 50);
    const force = setTimeout(() => servers.forEach((s) => s.closeAllConnections()), SHUTDOWN_GRACE_MS);
    const closed = Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    servers.forEach((s) => s.closeIdleConnections());
    await closed;
    clearInterval(sweep);
    clearTimeout(force);
  });
}

main().catch((error) => {
  process.stderr.write(`gatehouse: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
