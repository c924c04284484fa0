import { MigrationInterface, QueryRunner } from 'typeorm';
import { logChainAppendFunction } from './1764000513000-log-chain-append';

/**
 * `log_chain_append` deletes only the outbox rows of its batch's own (id, tenant) pairs. It deleted by id alone, so
 * a log written through the queue under one tenant with the id of another tenant's pending outbox event (ids of
 * queued logs are the producer's) deleted that event: a log the API had committed was lost before its job or the
 * relay could write it or report the conflict. The writer now sends each outbox id's tenant beside it (pairing them
 * from the batch's JSON in the database instead cost as much as parsing the batch again: docs/benchmarks/history.md). The
 * function of the old arguments stays, pairing them that way, for a worker not yet upgraded during a rolling deploy.
 */
export class LogChainAppendOwnOutbox1764000600000 implements MigrationInterface {
  name = 'LogChainAppendOwnOutbox1764000600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      logChainAppendFunction(
        'outbox_ids uuid[], outbox_tenants uuid[]',
        `DELETE FROM audit_outbox o USING unnest(outbox_ids, outbox_tenants) AS v(id, t)
          WHERE o.id = ANY(outbox_ids) AND o.id = v.id AND o.tenant_id = v.t;`,
      ),
    );
    await q.query(`CREATE OR REPLACE FUNCTION "log_chain_append"(outbox_ids uuid[], tenants uuid[], expected_seqs bigint[],
        expected_hashes text[], new_seqs bigint[], new_hashes text[], batch json)
      RETURNS integer LANGUAGE sql VOLATILE AS $$
        SELECT "log_chain_append"(ids, owners, tenants, expected_seqs, expected_hashes, new_seqs, new_hashes, batch)
        FROM (SELECT array_agg(b.id ORDER BY b.id) AS ids, array_agg(b.tenant_id ORDER BY b.id) AS owners
              FROM json_to_recordset(batch) AS b(id uuid, tenant_id uuid)) AS pairs
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP FUNCTION "log_chain_append"(uuid[], uuid[], uuid[], bigint[], text[], bigint[], text[], json)');
    await q.query(logChainAppendFunction('outbox_ids uuid[]', 'DELETE FROM audit_outbox WHERE id = ANY(outbox_ids);'));
  }
}
