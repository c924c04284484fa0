/**
 * Where the integration tiers find real PostgreSQL and Redis (`.ci/run` makes sure both are up). Each jest run gets
 * a database of its own (global setup names it), so concurrent runs on one machine cannot disturb each other.
 */
export const ADMIN_DATABASE_URL = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function testDatabaseName(): string {
  return process.env.TEST_DATABASE_NAME ?? 'gatehouse_test';
}

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? ADMIN_DATABASE_URL.replace(/\/[^/?]*(\?|$)/, `/${testDatabaseName()}$1`);
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15';
/** The checkpoint signing key of the tests (a fixed Ed25519 seed, hex): tests never generate one into a DATA_DIR. */
export const TEST_LOG_SIGNING_KEY = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
/** The vault's key-encryption key of the tests (32 bytes, hex): every test process shares it, as replicas must. */
export const TEST_VAULT_KEY = '5be4c8a6f1d2039e7a8b9c0d1e2f30415263748596a7b8c9dae0f1021324354a';
