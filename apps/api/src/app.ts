import { LoggerService } from '@nestjs/common';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { tracingEnabled } from '@gatehouse/runtime/tracing';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AppConfig } from '@gatehouse/config';
import { Database } from '@gatehouse/persistence';
import { AppModule } from './app.module';
import { accessLogWriter, FinishedRequest, requestObserver } from './http/access-log';
import { jsonBody } from './http/json-body';
import { httpMetrics, registerApiMetrics } from './observability/api-metrics';
import { queryParser } from './http/strict-query';
import { requestContextMiddleware } from './http/request-context';
import { mountOpenApi } from './openapi';
import { mountConsole } from './http/console';
import { ProxyInvocation } from './proxy-invocation/proxy-invocation.handler';
import { proxyResponseHeaderPolicy } from './proxy-invocation/response-header-policy';

export interface CreateApiAppOptions {
  config: AppConfig;
  database: Database;
  runJobs: boolean;
  logger: LoggerService | false;
  /** Where the access log goes (one line per request); none without it. */
  accessLog?: Logger;
  /** Where the app's metrics are registered (served on METRICS_PORT by `main`); none without it. */
  metrics?: Registry;
}

/** The HTTP application, initialised but not listening: `main` listens, tests use supertest on it. */
export async function createApiApp(options: CreateApiAppOptions): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.register({ config: options.config, database: options.database, runJobs: options.runJobs }),
    { bodyParser: false, logger: options.logger, abortOnError: false },
  );
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', queryParser);
  // Whose X-Forwarded-For is believed when telling clients apart (throttling, a log's source_ip); none unless configured.
  app.set('trust proxy', options.config.trustedProxies.length > 0 ? options.config.trustedProxies : false);
  app.use(requestContextMiddleware);
  const observers: Array<(finished: FinishedRequest) => void> = [];
  if (options.accessLog) observers.push(accessLogWriter(options.accessLog));
  if (options.metrics) observers.push(httpMetrics(options.metrics));
  if (observers.length > 0 || tracingEnabled()) app.use(requestObserver(observers));
  app.use(jsonBody(options.config.bodyLimitBytes, '/proxy'));
  // Every /proxy response, from a destination, a transform or an error, under one header policy.
  app.use('/proxy', proxyResponseHeaderPolicy, app.get(ProxyInvocation).handle);
  mountOpenApi(app);
  mountConsole(app);
  await app.init();
  if (options.metrics) registerApiMetrics(options.metrics, app, options.runJobs);
  return app;
}
