import type { Registry } from 'prom-client';
import { Counter } from 'prom-client';
import type { DataSource } from 'typeorm';
import { CachedApplicationRepository, CachedProxyRepository, CachedTokenRepository, readOperationalStats } from '@gatehouse/persistence';
import { BackgroundJobs, QueueDepths } from '@gatehouse/jobs';
import { JOB_SECONDS_BUCKETS, sampledGauge, secondsHistogram, sharedReading } from './metrics-registry';

/** Hit and miss counts of the key caches and the token cache: `gatehouse_cache_lookups_total{cache, result}`. */
export function registerCacheMetrics(registry: Registry, applications: unknown, proxies: unknown, tokens?: unknown): void {
  const caches: Array<[string, { keyCacheCounts: { hits: number; misses: number } }]> = [];
  if (applications instanceof CachedApplicationRepository) caches.push(['key', applications]);
  if (proxies instanceof CachedProxyRepository) caches.push(['proxy', proxies]);
  if (tokens instanceof CachedTokenRepository) caches.push(['token', tokens]);
  if (caches.length === 0) return;
  new Counter({
    name: 'gatehouse_cache_lookups_total',
    help: 'Lookups of API keys (cache="key"), proxy keys (cache="proxy") and tokens by id (cache="token") served from memory (result="hit") or the database (result="miss")',
    labelNames: ['cache', 'result'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [cache, repository] of caches) {
        this.inc({ cache, result: 'hit' }, repository.keyCacheCounts.hits);
        this.inc({ cache, result: 'miss' }, repository.keyCacheCounts.misses);
      }
    },
  });
}

/**
 * Where jobs run (the worker, or the api without Redis): queue depths, every job run's wait and duration, the
 * audit outbox's backlog and the expiry lag. Depths, backlog and lag are read when scraped.
 */
export function registerBackgroundMetrics(registry: Registry, jobs: BackgroundJobs, dataSource: DataSource): void {
  const { bullmq, inProcess, runner } = jobs.parts;
  if (!runner) return;

  const wait = secondsHistogram(
    registry,
    'gatehouse_job_wait_seconds',
    'From a job being added to a run of it starting (retries include their backoff)',
    JOB_SECONDS_BUCKETS,
    ['queue', 'name'],
  );
  const duration = secondsHistogram(
    registry,
    'gatehouse_job_duration_seconds',
    'Run time of one attempt of a job, by outcome (completed or failed; a failed attempt may be retried)',
    JOB_SECONDS_BUCKETS,
    ['queue', 'name', 'outcome'],
  );
  runner.registry.wrap(async ({ queue, name, context }, run) => {
    const started = Date.now();
    wait.observe({ queue, name }, Math.max(0, started - context.timestamp) / 1000);
    let outcome = 'failed';
    try {
      await run();
      outcome = 'completed';
    } finally {
      duration.observe({ queue, name, outcome }, (Date.now() - started) / 1000);
    }
  });

  const depths = async (): Promise<QueueDepths> => (bullmq ? bullmq.depths() : (inProcess?.depths() ?? {}));
  sampledGauge(
    registry,
    'gatehouse_queue_jobs',
    'Jobs in each queue by state (waiting, active, delayed, failed, prioritized); BullMQ figures are those of the whole Redis prefix',
    async () =>
      Object.entries(await depths()).flatMap(([queue, states]) => Object.entries(states).map(([state, value]) => ({ labels: { queue, state }, value }))),
    ['queue', 'state'],
  );

  const stats = sharedReading(() => readOperationalStats(dataSource));
  sampledGauge(registry, 'gatehouse_audit_outbox_rows', 'Audit events committed and not yet written to the logs', async () => [
    { value: (await stats()).outboxRows },
  ]);
  sampledGauge(registry, 'gatehouse_audit_outbox_oldest_age_seconds', 'Age of the oldest audit event still in the outbox (0 when empty)', async () => [
    { value: (await stats()).outboxOldestAgeSeconds },
  ]);
  sampledGauge(
    registry,
    'gatehouse_expiry_lag_seconds',
    'How long the most overdue expiring application has outlived its expires_at (0 when none)',
    async () => [{ value: (await stats()).expiryLagSeconds }],
  );
}
