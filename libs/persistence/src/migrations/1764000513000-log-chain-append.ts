import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `log_chain_append`: the log writer's one-statement path (docs/audit-trail.md, "Verifying the audit trail"). The writer remembers
 * each tenant's chain head from its last write, numbers and hashes a batch after those heads, and sends it all in one
 * call; the function deletes the batch's outbox rows, locks the heads (tenant order, like every writer), and inserts
 * the rows and moves the heads only if every head is still the one the batch was chained after and no id is stored
 * yet. Otherwise it raises (nothing is changed: the statement is rolled back) and the writer takes the transaction
 * path, which reads the heads under lock: `GHC01` a head moved (another writer, the relay) or was never seen, `GHC02`
 * a log id is already stored (a retried job).
 */
export class LogChainAppend1764000513000 implements MigrationInterface {
  name = 'LogChainAppend1764000513000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(logChainAppendFunction('outbox_ids uuid[]', 'DELETE FROM audit_outbox WHERE id = ANY(outbox_ids);'));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION "log_chain_append"(uuid[], uuid[], bigint[], text[], bigint[], text[], json)`);
  }
}

/** The insert of the unpartitioned logs table: an id already stored is skipped, and not counted in ROW_COUNT. */
export const INSERT_NEW_LOGS = `INSERT INTO logs (id, tenant_id, actor_id, actor_type, entity_type, entity_id, operation, message, created_at,
                          request_id, source_ip, user_agent, seq, hash)
          SELECT id, tenant_id, actor_id, actor_type, entity_type, entity_id, operation, message, created_at,
                 request_id, source_ip, user_agent, seq, hash
          FROM json_populate_recordset(NULL::logs, batch)
          ON CONFLICT (id) DO NOTHING;`;

/**
 * The function, its outbox parameters `outbox` and `deleteOutbox` its first statement (migration 1764000600000 added
 * the outbox rows' tenants), `insertLogs` the insert of the batch whose ROW_COUNT is the logs written (migration
 * 1764400000000: over partitions, with the ids claimed in log_ids).
 */
export function logChainAppendFunction(outbox: string, deleteOutbox: string, insertLogs = INSERT_NEW_LOGS): string {
  return `CREATE OR REPLACE FUNCTION "log_chain_append"(${outbox}, tenants uuid[], expected_seqs bigint[], expected_hashes text[],
        new_seqs bigint[], new_hashes text[], batch json)
      RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        matching integer;
        inserted integer;
      BEGIN
        -- The outbox rows first, then the heads in tenant order: the order of every writer and of the relay.
        ${deleteOutbox}
        PERFORM 1 FROM log_chains WHERE tenant_id = ANY(tenants) ORDER BY tenant_id FOR UPDATE;
        -- A new statement, so a new snapshot: the heads as their last writer committed them, and now locked.
        SELECT count(*) INTO matching FROM log_chains h
          JOIN unnest(tenants, expected_seqs, expected_hashes) AS e(t, s, x) ON h.tenant_id = e.t
          WHERE h.seq = e.s AND h.hash = decode(e.x, 'hex');
        IF matching <> cardinality(tenants) THEN
          RAISE EXCEPTION 'a chain head is not the one the batch was chained after' USING ERRCODE = 'GHC01';
        END IF;
        ${insertLogs}
        GET DIAGNOSTICS inserted = ROW_COUNT;
        -- The batch holds as many logs as its heads move forward.
        IF inserted <> (SELECT sum(s) FROM unnest(new_seqs) s) - (SELECT sum(s) FROM unnest(expected_seqs) s) THEN
          RAISE EXCEPTION 'a log id of the batch is already stored' USING ERRCODE = 'GHC02';
        END IF;
        UPDATE log_chains h SET seq = v.s, hash = decode(v.x, 'hex')
          FROM unnest(tenants, new_seqs, new_hashes) AS v(t, s, x) WHERE h.tenant_id = v.t;
        RETURN inserted;
      END $$`;
}
