import type { RedisOptions } from 'bullmq';
import IORedis from 'ioredis';

/** Bounded everything: a request that publishes must never wait on, or buffer for, an absent Redis. */
export const PRODUCER_TIMEOUT_MS = 2000;

export function producerConnection(url: string): IORedis {
  const redis = new IORedis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: PRODUCER_TIMEOUT_MS,
    commandTimeout: PRODUCER_TIMEOUT_MS,
    retryStrategy: reconnectDelay,
    connectionName: 'gatehouse-producer',
  });
  // Failures surface as rejected adds and in /health/ready; the 'error' event would otherwise crash.
  redis.on('error', () => undefined);
  return redis;
}

/** What the BullMQ workers connect with (they create their own blocking connections from it). */
export function consumerConnectionOptions(url: string): RedisOptions {
  return { url, retryStrategy: reconnectDelay, connectTimeout: 5000, connectionName: 'gatehouse-worker' };
}

// Back within a second or two of Redis returning, without hammering it while it is away.
function reconnectDelay(times: number): number {
  return Math.min(100 * 2 ** Math.min(times, 5), 2000);
}
