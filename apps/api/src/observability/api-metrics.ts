import type { INestApplicationContext } from '@nestjs/common';
import type { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { ApplicationRepository, ProxyRepository, TokenRepository } from '@gatehouse/domain';
import { Reactor } from '@gatehouse/reactor';
import { BackgroundJobs, RedisHealth } from '@gatehouse/jobs';
import {
  registerBackgroundMetrics,
  registerCacheMetrics,
  registerDependencyMetrics,
  registerReactorMetrics,
  REQUEST_SECONDS_BUCKETS,
  secondsHistogram,
} from '@gatehouse/runtime';
import type { FinishedRequest } from '../http/access-log';
import { registerRateLimitMetrics } from '../rate-limits/rate-limit-metrics';

/** A transform's wait for a sandbox process: tens of microseconds when one is free, up to the queue timeout (30 s). */
const QUEUE_WAIT_SECONDS_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Request rate, errors and latency by route template and status (the `_count` of the histogram is the request
 * count), and on /proxy the destination's latency by its status and the time spent in transforms. Fed by the same
 * per-request record as the access log.
 */
export function httpMetrics(registry: Registry): (finished: FinishedRequest) => void {
  const requests = secondsHistogram(
    registry,
    'gatehouse_http_request_duration_seconds',
    'API and /proxy requests by method, route template and status: latency, and with _count the request rate',
    REQUEST_SECONDS_BUCKETS,
    ['method', 'route', 'status'],
  );
  const destination = secondsHistogram(
    registry,
    'gatehouse_proxy_destination_duration_seconds',
    "Proxy destinations' time to response headers, by the destination's status (or error, timeout, refused)",
    REQUEST_SECONDS_BUCKETS,
    ['status'],
  );
  const transforms = secondsHistogram(
    registry,
    'gatehouse_proxy_transform_duration_seconds',
    'Time one /proxy request spent in its request and response transforms',
    REQUEST_SECONDS_BUCKETS,
  );
  return ({ method, route, status, durationMs, record }) => {
    requests.observe({ method, route, status: String(status) }, durationMs / 1000);
    if (record.destinationMs !== undefined) {
      const outcome = record.destinationStatus !== undefined ? String(record.destinationStatus) : destinationFailure(record.error);
      destination.observe({ status: outcome }, record.destinationMs / 1000);
    }
    if (record.transformMs !== undefined) transforms.observe(record.transformMs / 1000);
  };
}

function destinationFailure(error: string | undefined): string {
  if (error === 'destination_timeout') return 'timeout';
  if (error === 'destination_refused') return 'refused';
  return 'error';
}

/** The figures read from the app's parts at scrape time: the sandbox, the key caches, and the jobs when they run here. */
export function registerApiMetrics(registry: Registry, app: INestApplicationContext, runJobs: boolean): void {
  const reactor = app.get(Reactor);
  registerReactorMetrics(registry, reactor);
  const queueWait = secondsHistogram(
    registry,
    'gatehouse_reactor_queue_wait_seconds',
    'Time a transform run waited for a sandbox process, by how the wait ended: ran, refused (503: queue full), timed_out (503: none in time)',
    QUEUE_WAIT_SECONDS_BUCKETS,
    ['outcome'],
  );
  reactor.onQueueWait((seconds, outcome) => queueWait.observe({ outcome }, seconds));
  const outbound = secondsHistogram(
    registry,
    'gatehouse_transform_outbound_request_duration_seconds',
    "Transforms' own outbound requests (fetch, http.request), by how they ended: ok, refused (destination policy, http://, redirects), limit (over 50 in one run), error, timeout, too_large (response body)",
    REQUEST_SECONDS_BUCKETS,
    ['outcome'],
  );
  reactor.onOutbound((seconds, outcome) => outbound.observe({ outcome }, seconds));
  registerCacheMetrics(registry, app.get(ApplicationRepository), app.get(ProxyRepository), app.get(TokenRepository));
  registerRateLimitMetrics(registry, app);
  registerDependencyMetrics(registry, app.get(DataSource), optionalRedis(app));
  if (runJobs) registerBackgroundMetrics(registry, app.get(BackgroundJobs), app.get(DataSource));
}

/** The Redis health check, when this process runs with Redis (none without it). */
function optionalRedis(app: INestApplicationContext): RedisHealth | undefined {
  try {
    return app.get(RedisHealth, { strict: false });
  } catch {
    return undefined;
  }
}
