import { MigrationInterface, QueryRunner } from 'typeorm';

// The domain's RateLimit as stored: {"limit": N, "windowSeconds": W}; the checks keep anything else out.
const RATE_LIMIT_SHAPE = (column: string) =>
  `CHECK ("${column}" IS NULL OR (jsonb_typeof("${column}"->'limit') = 'number' AND jsonb_typeof("${column}"->'windowSeconds') = 'number'))`;

export class RateLimits1764000100000 implements MigrationInterface {
  name = 'RateLimits1764000100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "applications" ADD COLUMN "rate_limit" jsonb ${RATE_LIMIT_SHAPE('rate_limit')}`);
    await q.query(`ALTER TABLE "proxies" ADD COLUMN "rate_limit" jsonb ${RATE_LIMIT_SHAPE('rate_limit')}`);
    await q.query(`ALTER TABLE "tenants" ADD COLUMN "default_rate_limit" jsonb ${RATE_LIMIT_SHAPE('default_rate_limit')}`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "tenants" DROP COLUMN "default_rate_limit"`);
    await q.query(`ALTER TABLE "proxies" DROP COLUMN "rate_limit"`);
    await q.query(`ALTER TABLE "applications" DROP COLUMN "rate_limit"`);
  }
}
