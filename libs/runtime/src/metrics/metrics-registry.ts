import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { gatehouseVersion } from '@gatehouse/config';

/** Buckets (seconds) of what answers a caller: requests, destinations, transforms (1 ms to 30 s). */
export const REQUEST_SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;
/** Buckets (seconds) of background work: a job's wait and run (5 ms to 5 min). */
export const JOB_SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300] as const;

/** A histogram of durations in seconds on `registry`: every histogram of both processes is made here. */
export function secondsHistogram<L extends string = never>(
  registry: Registry,
  name: string,
  help: string,
  buckets: readonly number[],
  labelNames: readonly L[] = [],
): Histogram<L> {
  return new Histogram<L>({ name, help, labelNames, buckets: [...buckets], registers: [registry] });
}

/**
 * A registry with the process's own figures (CPU, memory, event-loop lag, GC), every series labelled by service, and
 * `gatehouse_build_info` (always 1): the release and Node.js version this process runs, for joins and upgrade dashboards.
 */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'gatehouse_build_info',
    help: 'The Gatehouse release (version) and Node.js version this process runs; always 1',
    labelNames: ['version', 'node_version'],
    registers: [registry],
  }).set({ version: gatehouseVersion(), node_version: process.versions.node }, 1);
  return registry;
}

/**
 * The Prometheus endpoint on a listener of its own (METRICS_PORT), never on the public port: `GET /metrics`, and
 * 404 for anything else. Figures read at scrape time (gauges over a database query, say) are read then. It binds
 * `host` (METRICS_HOST): loopback by default, so that only this host scrapes it.
 */
export async function startMetricsServer(registry: Registry, port: number, host = '127.0.0.1'): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (error: unknown) =>
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics unavailable: ${error instanceof Error ? error.message : String(error)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  // Never keeps the process alive on its own, and never delays a drain.
  server.unref();
  return server;
}

export function metricsPortOf(server: Server): number {
  return (server.address() as AddressInfo).port;
}

/**
 * A counter whose total is kept elsewhere (a library's own stats), read at scrape time; series whose reading is
 * undefined are left out (a figure that library does not keep).
 */
export function mirroredCounter(registry: Registry, name: string, help: string, read: () => number | undefined): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const value = read();
      if (value === undefined) return;
      this.reset();
      this.inc(value);
    },
  });
}

/** A gauge read at scrape time (possibly from a query), with optional labels. */
export function sampledGauge<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  read: () => Promise<Array<{ labels?: Partial<Record<L, string>>; value: number }>> | Array<{ labels?: Partial<Record<L, string>>; value: number }>,
  labelNames: readonly L[] = [],
): void {
  new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      const samples = await read();
      this.reset();
      for (const { labels, value } of samples) {
        if (labels) this.set(labels as Record<L, string>, value);
        else this.set(value);
      }
    },
  });
}

/** One read shared by the gauges of one scrape (they are collected concurrently), fresh for `ttlMs`. */
export function sharedReading<T>(read: () => Promise<T>, ttlMs = 1000): () => Promise<T> {
  let cached: { at: number; value: Promise<T> } | undefined;
  return () => {
    const now = Date.now();
    if (!cached || now - cached.at > ttlMs) {
      const value = read();
      cached = { at: now, value };
      // A failed read is not kept: the next scrape tries again.
      value.catch(() => (cached = undefined));
    }
    return cached.value;
  };
}
