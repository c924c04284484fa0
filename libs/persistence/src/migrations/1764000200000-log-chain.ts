import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tamper evidence for the logs (docs/audit-trail.md, "Verifying the audit trail"):
 * - every log gets its tenant's next position (`seq`) and its chain hash;
 * - `log_chains` holds each tenant's head, the row writers lock to extend a chain one after another;
 * - `log_checkpoints` holds the worker's signed heads;
 * - the request fields (`request_id`, `source_ip`, `user_agent`) on logs and on outbox events.
 * `log_chain_hash` is the chain's hash function in SQL, the same bytes as the domain's `chainHash`; the
 * backfill of logs written before this migration runs it as a window aggregate, in (created_at, id) order.
 */
export class LogChain1764000200000 implements MigrationInterface {
  name = 'LogChain1764000200000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['logs', 'audit_outbox']) {
      await q.query(`ALTER TABLE "${table}" ADD COLUMN "request_id" varchar(128), ADD COLUMN "source_ip" varchar(64), ADD COLUMN "user_agent" varchar(512)`);
    }
    await q.query(`ALTER TABLE "logs" ADD COLUMN "seq" bigint, ADD COLUMN "hash" bytea`);

    // field(v): 4-byte big-endian length of v's UTF-8 bytes, then the bytes; NULL is FF FF FF FF.
    await q.query(`CREATE FUNCTION "log_chain_field"(v text) RETURNS bytea LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT CASE WHEN v IS NULL THEN '\\xffffffff'::bytea
        ELSE int4send(octet_length(convert_to(v, 'UTF8'))) || convert_to(v, 'UTF8') END $$`);
    await q.query(`CREATE FUNCTION "log_chain_hash"(previous bytea, tenant_id uuid, seq bigint, id uuid, created_at timestamptz,
        actor_type text, actor_id uuid, entity_type text, entity_id text, operation text, message text,
        request_id text, source_ip text, user_agent text)
      RETURNS bytea LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT sha256(coalesce(previous, '\\x0000000000000000000000000000000000000000000000000000000000000000'::bytea)
        || log_chain_field('gatehouse.log.v1') || log_chain_field(tenant_id::text) || log_chain_field(seq::text)
        || log_chain_field(id::text)
        || log_chain_field(to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
        || log_chain_field(actor_type) || log_chain_field(actor_id::text) || log_chain_field(entity_type)
        || log_chain_field(entity_id) || log_chain_field(operation) || log_chain_field(message)
        || log_chain_field(request_id) || log_chain_field(source_ip) || log_chain_field(user_agent)) $$`);
    // As an aggregate whose state is the previous hash: log_chain(...) OVER (PARTITION BY tenant_id ORDER BY seq)
    // gives every row its chain hash in one pass.
    await q.query(`CREATE AGGREGATE "log_chain"(tenant_id uuid, seq bigint, id uuid, created_at timestamptz, actor_type text,
        actor_id uuid, entity_type text, entity_id text, operation text, message text, request_id text, source_ip text, user_agent text)
      (SFUNC = log_chain_hash, STYPE = bytea)`);

    await q.query(`ALTER TABLE "logs" DISABLE TRIGGER "logs_append_only"`);
    const fields = 'tenant_id, id, created_at, actor_type, actor_id, entity_type, entity_id, operation, message, request_id, source_ip, user_agent';
    await q.query(`UPDATE "logs" l SET "seq" = c.position, "hash" = c.chained FROM (
        SELECT id, position, log_chain(tenant_id, position, id, created_at, actor_type, actor_id, entity_type, entity_id, operation,
                                       message, request_id, source_ip, user_agent) OVER (PARTITION BY tenant_id ORDER BY position) AS chained
        FROM (SELECT ${fields}, row_number() OVER (PARTITION BY tenant_id ORDER BY created_at, id) AS position FROM "logs") n) c
      WHERE l.id = c.id`);
    await q.query(`ALTER TABLE "logs" ENABLE TRIGGER "logs_append_only"`);
    await q.query(`ALTER TABLE "logs" ALTER COLUMN "seq" SET NOT NULL, ALTER COLUMN "hash" SET NOT NULL`);
    // The chain order: verification and exports read it; a second row at one position is refused.
    await q.query(`CREATE UNIQUE INDEX "logs_tenant_seq_idx" ON "logs" ("tenant_id", "seq")`);

    // Only the API's own logs carry a request id: a partial index costs the other services' logs nothing.
    await q.query(`CREATE INDEX "logs_tenant_request_idx" ON "logs" ("tenant_id", "request_id", "created_at" DESC, "id" DESC) WHERE "request_id" IS NOT NULL`);
    await q.query(`CREATE TABLE "log_chains" (
      "tenant_id" uuid PRIMARY KEY,
      "seq" bigint NOT NULL,
      "hash" bytea NOT NULL)`);
    await q.query(`INSERT INTO "log_chains" ("tenant_id", "seq", "hash")
      SELECT DISTINCT ON (tenant_id) tenant_id, seq, hash FROM "logs" ORDER BY tenant_id, seq DESC`);

    await q.query(`CREATE TABLE "log_checkpoints" (
      "tenant_id" uuid NOT NULL,
      "seq" bigint NOT NULL,
      "hash" bytea NOT NULL,
      "signed_at" timestamptz NOT NULL,
      "key_id" varchar(64) NOT NULL,
      "signature" bytea NOT NULL,
      PRIMARY KEY ("tenant_id", "seq"))`);
    await q.query(`CREATE TRIGGER "log_checkpoints_append_only" BEFORE UPDATE OR DELETE ON "log_checkpoints"
      FOR EACH ROW EXECUTE FUNCTION "logs_refuse_change"()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "log_checkpoints"`);
    await q.query(`DROP TABLE "log_chains"`);
    await q.query(`DROP INDEX "logs_tenant_seq_idx"`);
    await q.query(`DROP INDEX "logs_tenant_request_idx"`);
    await q.query(`DROP AGGREGATE "log_chain"(uuid, bigint, uuid, timestamptz, text, uuid, text, text, text, text, text, text, text)`);
    await q.query(`DROP FUNCTION "log_chain_hash"(bytea, uuid, bigint, uuid, timestamptz, text, uuid, text, text, text, text, text, text, text)`);
    await q.query(`DROP FUNCTION "log_chain_field"(text)`);
    await q.query(`ALTER TABLE "logs" DROP COLUMN "seq", DROP COLUMN "hash"`);
    for (const table of ['logs', 'audit_outbox']) {
      await q.query(`ALTER TABLE "${table}" DROP COLUMN "request_id", DROP COLUMN "source_ip", DROP COLUMN "user_agent"`);
    }
  }
}
