import type { INestApplicationContext } from '@nestjs/common';
import { Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { ApplicationRepository, ProxyRepository } from '@gatehouse/domain';
import { Reactor } from '@gatehouse/reactor';
import { BackgroundJobs } from '@gatehouse/queue';
import { registerBackgroundMetrics, registerCacheMetrics, registerReactorMetrics } from '@gatehouse/runtime';
import type { FinishedRequest } from '../http/access-log';
import { registerRateLimitMetrics } from '../rate-limits/rate-limit-metrics';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Request rate, errors and latency by route template and status (the `_count` of the histogram is the request
 * count), and on /proxy the destination's latency by its status and the time spent in transforms. Fed by the same
 * per-request record as the access log.
 */
export function httpMetrics(registry: Registry): (finished: FinishedRequest) => void {
  const requests = new Histogram({
    name: 'gatehouse_http_request_duration_seconds',
    help: 'API and /proxy requests by method, route template and status: latency, and with _count the request rate',
    labelNames: ['method', 'route', 'status'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const destination = new Histogram({
    name: 'gatehouse_proxy_destination_duration_seconds',
    help: "Proxy destinations' time to response headers, by the destination's status (or error, timeout, refused)",
    labelNames: ['status'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const transforms = new Histogram({
    name: 'gatehouse_proxy_transform_duration_seconds',
    help: 'Time one /proxy request spent in its request and response transforms',
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
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
  registerReactorMetrics(registry, app.get(Reactor));
  registerCacheMetrics(registry, app.get(ApplicationRepository), app.get(ProxyRepository));
  registerRateLimitMetrics(registry, app);
  if (runJobs) registerBackgroundMetrics(registry, app.get(BackgroundJobs), app.get(DataSource));
}
