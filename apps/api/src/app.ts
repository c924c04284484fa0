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
import { ExpressRouter, methodNotAllowed } from './http/method-not-allowed';
import { httpMetrics, registerApiMetrics } from './observability/api-metrics';
import { queryParser } from './http/strict-query';
import { requestContextMiddleware } from './http/request-context';
import { mountOpenApi } from './openapi';
import { mountConsole } from './http/console';
import { ProxyInvocation } from './proxy-invocation/proxy-invocation.handler';
import { applyProxyResponseHeaderPolicy } from './proxy-invocation/response-header-policy';
import { answeredConsolePreflight, notOnConsoleOrigin, onConsoleOrigin, Origins } from './http/console-origin';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

export interface CreateApiAppOptions {
  config: AppConfig;
  database: Database;
  runJobs: boolean;
  logger: LoggerService | false;
  /** Where the access log goes (one line per request); none without it. */
  accessLog?: Logger;
  /** Where the app's metrics are registered (served on METRICS_PORT by `main`); none without it. */
  metrics?: Registry;
  /** Where browsers reach the console and the API (`main` sets the bound ports); from the configuration without it. */
  origins?: Origins;
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
  // No answer of this service is ever sniffed into another type (an error echoing a path stays problem+json).
  app.use(noSniff);
  const observers: Array<(finished: FinishedRequest) => void> = [];
  // Below `info` no access line is written: no observer for it either (LOG_LEVEL is fixed at start).
  if (options.accessLog?.isLevelEnabled('info')) observers.push(accessLogWriter(options.accessLog));
  if (options.metrics) observers.push(httpMetrics(options.metrics));
  if (observers.length > 0 || tracingEnabled()) app.use(requestObserver(observers));
  const origins = options.origins ?? new Origins(options.config);
  // The data plane as one layer, ahead of the 405 matcher and the JSON body parser (it needs neither: it answers its
  // own 405 and streams its own bodies), so a /proxy request walks as few of express's layers as it can.
  app.use('/proxy', dataPlane(origins, app.get(ProxyInvocation).handle));
  const express = app.getHttpAdapter().getInstance() as unknown as { router: ExpressRouter };
  app.use(methodNotAllowed(() => express.router));
  app.use(jsonBody(options.config.bodyLimitBytes, '/proxy'));
  app.use(['/docs', '/openapi.json', '/openapi.yaml'], notOnConsoleOrigin('The API documentation'));
  mountOpenApi(app);
  mountConsole(app, origins);
  await app.init();
  if (options.metrics) registerApiMetrics(options.metrics, app, options.runJobs);
  return app;
}

/**
 * `/proxy`: tenants' bytes are never served on the console's origin; on the API's, every response (a destination's, a
 * transform's, an error) is under one header policy, shared with the console's origin alone (CORS) for its "Try the
 * proxy".
 */
function dataPlane(origins: Origins, handle: RequestHandler) {
  const refuseOnConsole = notOnConsoleOrigin('The data plane (/proxy)');
  return (req: Request, res: Response, next: NextFunction): void => {
    if (onConsoleOrigin(req)) return refuseOnConsole(req, res, next);
    const corsOrigin = origins.corsOriginFor(req);
    applyProxyResponseHeaderPolicy(res, corsOrigin);
    if (corsOrigin !== undefined && answeredConsolePreflight(req, res, corsOrigin)) return;
    handle(req, res, next);
  };
}

function noSniff(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  next();
}
