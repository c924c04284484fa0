import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import type { Database } from '@gatehouse/persistence';
import { QueueName } from '@gatehouse/jobs';
import { TEST_REDIS_URL } from '@gatehouse/test-support/test-env';

/** The jobs library's queue helpers for tests (`@gatehouse/jobs/testing`); a jobs host: test/support/jobs-host.ts. */

/** Queue keys of one test file alone: parallel runs and earlier runs cannot see each other's jobs. */
export function uniquePrefix(name: string): string {
  return `gh-test-${name}-${process.pid}-${Date.now().toString(36)}`;
}

export async function deleteQueueKeys(prefix: string): Promise<void> {
  const redis = new IORedis(TEST_REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** A BullMQ queue handle as another service would hold one. */
export function rawQueue(prefix: string, name: QueueName = QueueName.AuditLogs): Queue {
  return new Queue(name, { connection: { url: TEST_REDIS_URL }, prefix });
}

export async function waitFor<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function countLogs(database: Database, tenantId: string): Promise<number> {
  const [row] = await database.dataSource.query('SELECT count(*)::int AS n FROM logs WHERE tenant_id = $1', [tenantId]);
  return row.n;
}
