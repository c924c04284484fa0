import { MigrationInterface, QueryRunner } from 'typeorm';
import { logChainAppendFunction } from './1764000513000-log-chain-append';

/**
 * `log_chain_append` deletes only the outbox rows of its batch's own (id, tenant) pairs. It deleted by id alone, so
 * a log written through the queue under one tenant with the id of another tenant's pending outbox event (ids of
 * queued logs are the producer's) deleted that event: a log the API had committed was lost before its job or the
 * relay could write it or report the conflict. Same signature, so a worker of either version runs against either.
 */
export class LogChainAppendOwnOutbox1764000600000 implements MigrationInterface {
  name = 'LogChainAppendOwnOutbox1764000600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(logChainAppendFunction(`DELETE FROM audit_outbox o USING json_populate_recordset(NULL::logs, batch) AS b
          WHERE o.id = ANY(outbox_ids) AND o.id = b.id AND o.tenant_id = b.tenant_id;`));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(logChainAppendFunction(`DELETE FROM audit_outbox WHERE id = ANY(outbox_ids);`));
  }
}
