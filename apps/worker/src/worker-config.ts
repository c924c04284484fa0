import { AppConfig } from '@gatehouse/config';

/**
 * The worker only makes sense beside an api sharing its PostgreSQL and Redis; the one line a misconfigured
 * start prints, or undefined when it may start.
 */
export function workerConfigProblem(config: AppConfig): string | undefined {
  const missing = [!config.databaseUrl && 'DATABASE_URL', !config.redisUrl && 'REDIS_URL'].filter(Boolean);
  if (missing.length === 0) return undefined;
  return `${missing.join(' and ')} must be set: the worker shares PostgreSQL and Redis with the api (without Redis, \`npm start\` runs the jobs inside the api)`;
}
