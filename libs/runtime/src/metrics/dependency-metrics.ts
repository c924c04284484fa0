import type { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import type { RedisHealth } from '@gatehouse/jobs';
import { sampledGauge } from './metrics-registry';

const CHECK_TIMEOUT_MS = 2000;

/** A check that answers false when it throws or takes longer than `ms`. */
export async function checkWithin(check: Promise<boolean>, ms = CHECK_TIMEOUT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([check.catch(() => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `gatehouse_dependency_up{dependency="database"|"redis"}`: 1 when the dependency answered the scrape's check
 * (`SELECT 1`, `PING`) within two seconds, else 0 (the alert rules' "database or Redis unavailable").
 * Redis is absent when this process runs without it.
 */
export function registerDependencyMetrics(registry: Registry, dataSource: DataSource, redis?: RedisHealth): void {
  sampledGauge(
    registry,
    'gatehouse_dependency_up',
    'Whether a backing service answered a check at scrape time (1) or not (0): database (SELECT 1), redis (PING)',
    async () => {
      const [database, redisUp] = await Promise.all([
        checkWithin(dataSource.query('SELECT 1').then(() => true)),
        redis ? checkWithin(redis.ping()) : Promise.resolve(undefined),
      ]);
      return [
        { labels: { dependency: 'database' }, value: database ? 1 : 0 },
        ...(redisUp === undefined ? [] : [{ labels: { dependency: 'redis' }, value: redisUp ? 1 : 0 }]),
      ];
    },
    ['dependency'],
  );
}
