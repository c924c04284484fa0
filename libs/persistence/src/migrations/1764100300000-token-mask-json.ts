import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A token's mask expression is stored as `json`, not `jsonb`: jsonb orders an object's members its own way, and a
 * token read back showed its mask's members in another order than it was created with. Nothing queries inside a mask,
 * so jsonb bought nothing. Masks stored before keep the order jsonb gave them.
 */
export class TokenMaskJson1764100300000 implements MigrationInterface {
  name = 'TokenMaskJson1764100300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "tokens" ALTER COLUMN "mask" TYPE json USING "mask"::json`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "tokens" ALTER COLUMN "mask" TYPE jsonb USING "mask"::jsonb`);
  }
}
