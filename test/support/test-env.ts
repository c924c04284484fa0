/** Where the integration tiers find real PostgreSQL and Redis (`.ci/run` makes sure both are up). */
export const TEST_DATABASE_NAME = process.env.TEST_DATABASE_NAME ?? 'gatehouse_test';
export const ADMIN_DATABASE_URL = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const TEST_DATABASE_URL =
  process.env.TEST_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/${TEST_DATABASE_NAME}`;
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15';
