import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSigningKey } from '@gatehouse/config';
import {
  ChainVerification,
  CheckpointSigner,
  checkpointMessage,
  AuditEvent,
  LogChainWriter,
  LogCheckpointRepository,
  LogRepository,
  SignLogCheckpoints,
  SystemClock,
  VerifyLogChain,
} from '@gatehouse/domain';
import { openDatabase, TypeormLogChainWriter } from '@gatehouse/persistence';
import { CLI_MAIN, runToCompletion } from '@gatehouse/test-support/service-process';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { TEST_DATABASE_URL, TEST_LOG_SIGNING_KEY } from '@gatehouse/test-support/test-env';

jest.setTimeout(120_000);

const signer = new CheckpointSigner(() => parseSigningKey(TEST_LOG_SIGNING_KEY));

/**
 * Tampering as whoever holds the database would do it: statements straight into PostgreSQL, as a superuser with
 * the append-only triggers off for the session (`session_replication_role = replica`), then verification.
 * Each case works on a tenant of its own: 25 logs, checkpoints signed at positions 10 and 20, 5 logs unsigned.
 */
describe('tamper evidence of the audit trail', () => {
  let t: TestApp;
  let logs: LogRepository;
  let writer: LogChainWriter;
  let checkpoints: LogCheckpointRepository;

  beforeAll(async () => {
    t = await startTestApp();
    logs = t.app.get(LogRepository);
    writer = t.app.get(LogChainWriter);
    checkpoints = t.app.get(LogCheckpointRepository);
  });
  afterAll(() => t.close());

  const sql = (text: string, params: unknown[] = []) => t.database.dataSource.query(text, params);
  const asSuperuser = async (statements: (q: (text: string, params?: unknown[]) => Promise<unknown>) => Promise<unknown>) => {
    await t.database.dataSource.transaction(async (em) => {
      await em.query('SET LOCAL session_replication_role = replica');
      await statements((text, params = []) => em.query(text, params));
    });
  };
  const verify = (tenantId: string): Promise<ChainVerification> => new VerifyLogChain(logs, checkpoints).execute(tenantId, signer.publicKey, undefined, 7);
  const idAt = async (tenantId: string, position: number): Promise<string> =>
    (await sql('SELECT id FROM logs WHERE tenant_id = $1 AND seq = $2', [tenantId, position]))[0].id;

  function newLogs(tenantId: string, count: number, from: number): AuditEvent[] {
    return Array.from({ length: count }, (_, i) => ({
      id: randomUUID(),
      tenantId,
      actorId: randomUUID(),
      actorType: 'application' as const,
      entityType: 'token',
      entityId: `tok_${from + i}`,
      operation: 'read' as const,
      message: `Token tok_${from + i} read`,
      createdAt: new Date(Date.UTC(2026, 10, 1) + (from + i) * 1000),
      ...(i % 2 === 0 ? { requestId: `req-${from + i}`, sourceIp: '203.0.113.7', userAgent: 'curl/8.5 ünïcode' } : {}),
    }));
  }

  /** 25 logs; checkpoints at 10 and 20. */
  async function signedTenant(): Promise<string> {
    const tenantId = randomUUID();
    const sign = new SignLogCheckpoints(checkpoints, signer, new SystemClock());
    await writer.append(newLogs(tenantId, 10, 1));
    await sign.execute();
    await writer.append(newLogs(tenantId, 10, 11));
    await sign.execute();
    await writer.append(newLogs(tenantId, 5, 21));
    return tenantId;
  }

  // Recomputes the stored hashes from `from` to the end with the database's own hash function, and the head:
  // what a careful attacker does to hide a change from a plain chain check.
  async function rehashFrom(q: (text: string) => Promise<unknown>, tenantId: string, from: number): Promise<void> {
    await q(`DO $$ DECLARE r record; prev bytea; BEGIN
      SELECT hash INTO prev FROM logs WHERE tenant_id = '${tenantId}' AND seq = ${from - 1};
      FOR r IN SELECT * FROM logs WHERE tenant_id = '${tenantId}' AND seq >= ${from} ORDER BY seq LOOP
        prev := log_chain_hash(prev, r.tenant_id, r.seq, r.id, r.created_at, r.actor_type, r.actor_id, r.entity_type, r.entity_id,
                               r.operation, r.message, r.request_id, r.source_ip, r.user_agent);
        UPDATE logs SET hash = prev WHERE id = r.id;
      END LOOP;
      UPDATE log_chains h SET seq = m.seq, hash = m.hash
        FROM (SELECT seq, hash FROM logs WHERE tenant_id = '${tenantId}' ORDER BY seq DESC LIMIT 1) m WHERE h.tenant_id = '${tenantId}';
    END $$`);
  }

  it('verifies a clean tenant, with the unsigned tail counted', async () => {
    const tenantId = await signedTenant();
    const result = await verify(tenantId);
    expect(result).toMatchObject({ valid: true, logs: 25, head: { position: 25 }, checkpoints: 2, unsignedLogs: 5, invalidCheckpoints: [] });
    expect(result.lastVerifiedCheckpoint?.position).toBe(20);
    expect(result.firstInvalidLog).toBeUndefined();
  });

  it('computes the same hashes in SQL (log_chain_hash) as in the domain, unicode and absent fields included', async () => {
    const tenantId = await signedTenant();
    const rows = await sql(
      `SELECT encode(hash, 'hex') AS stored, encode(log_chain_hash(lag(hash) OVER (ORDER BY seq), tenant_id, seq, id, created_at, actor_type,
         actor_id, entity_type, entity_id, operation, message, request_id, source_ip, user_agent), 'hex') AS recomputed
       FROM logs WHERE tenant_id = $1 ORDER BY seq`,
      [tenantId],
    );
    expect(rows).toHaveLength(25);
    for (const row of rows) expect(row.recomputed).toBe(row.stored);
  });

  it('detects an updated message and names that log', async () => {
    const tenantId = await signedTenant();
    await asSuperuser((q) => q(`UPDATE logs SET message = 'nothing to see' WHERE tenant_id = $1 AND seq = 7`, [tenantId]));
    const result = await verify(tenantId);
    expect(result.valid).toBe(false);
    expect(result.firstInvalidLog).toMatchObject({ position: 7, id: await idAt(tenantId, 7) });
  });

  it('detects an updated message even with every later hash and the head recomputed: the checkpoint does not match', async () => {
    const tenantId = await signedTenant();
    await asSuperuser(async (q) => {
      await q(`UPDATE logs SET message = 'rewritten' WHERE tenant_id = $1 AND seq = 15`, [tenantId]);
      await rehashFrom(q, tenantId, 15);
    });
    const result = await verify(tenantId);
    expect(result.valid).toBe(false);
    // Logs 11-20 are no longer covered by a checkpoint that verifies: 11 is the first that does not verify.
    expect(result.firstInvalidLog).toMatchObject({ position: 11, id: await idAt(tenantId, 11) });
    expect(result.firstInvalidLog!.reason).toMatch(/from position 11 to 20 do not match the checkpoint/);
    expect(result.lastVerifiedCheckpoint?.position).toBe(10);
  });

  it('detects a deleted row', async () => {
    const tenantId = await signedTenant();
    const next = await idAt(tenantId, 13);
    await asSuperuser((q) => q(`DELETE FROM logs WHERE tenant_id = $1 AND seq = 12`, [tenantId]));
    const result = await verify(tenantId);
    expect(result.valid).toBe(false);
    expect(result.firstInvalidLog!.position).toBe(12);
    expect(result.firstInvalidLog!.reason).toContain(`no log at position 12`);
    expect(result.firstInvalidLog!.reason).toContain(next);
  });

  it('detects an inserted row, the later positions shifted to make room', async () => {
    const tenantId = await signedTenant();
    const forged = randomUUID();
    await asSuperuser(async (q) => {
      await q(`UPDATE logs SET seq = seq + 1000 WHERE tenant_id = $1 AND seq >= 12`, [tenantId]);
      await q(`UPDATE logs SET seq = seq - 999 WHERE tenant_id = $1 AND seq >= 1012`, [tenantId]);
      await q(
        `INSERT INTO logs (id, tenant_id, actor_id, actor_type, entity_type, entity_id, operation, message, created_at, seq, hash)
         VALUES ($1, $2, NULL, 'system', 'token', 'tok_x', 'delete', 'forged', now(), 12, sha256('x'))`,
        [forged, tenantId],
      );
    });
    const result = await verify(tenantId);
    expect(result.valid).toBe(false);
    expect(result.firstInvalidLog).toMatchObject({ position: 12, id: forged });
  });

  it('detects two rows swapped', async () => {
    const tenantId = await signedTenant();
    const [five, six] = [await idAt(tenantId, 5), await idAt(tenantId, 6)];
    await asSuperuser(async (q) => {
      await q(`UPDATE logs SET seq = -6 WHERE id = $1`, [five]);
      await q(`UPDATE logs SET seq = 5 WHERE id = $1`, [six]);
      await q(`UPDATE logs SET seq = 6 WHERE id = $1`, [five]);
    });
    const result = await verify(tenantId);
    expect(result.valid).toBe(false);
    expect(result.firstInvalidLog).toMatchObject({ position: 5, id: six });
  });

  it('detects a truncated tail, the head moved back to match', async () => {
    const tenantId = await signedTenant();
    await asSuperuser(async (q) => {
      await q(`DELETE FROM logs WHERE tenant_id = $1 AND seq > 15`, [tenantId]);
      await q(`UPDATE log_chains h SET seq = 15, hash = l.hash FROM logs l WHERE l.tenant_id = $1 AND l.seq = 15 AND h.tenant_id = $1`, [tenantId]);
    });
    const result = await verify(tenantId);
    expect(result.valid).toBe(false);
    expect(result.firstInvalidLog!.position).toBe(16);
    expect(result.firstInvalidLog!.reason).toMatch(/covers position 20: logs were removed from the end/);
  });

  it('detects a truncated tail past the last checkpoint against the recorded head', async () => {
    const tenantId = await signedTenant();
    await asSuperuser((q) => q(`DELETE FROM logs WHERE tenant_id = $1 AND seq > 22`, [tenantId]));
    const result = await verify(tenantId);
    expect(result.valid).toBe(false);
    expect(result.firstInvalidLog!.position).toBe(23);
  });

  it('detects a removed chain head (which would otherwise hide the whole chain)', async () => {
    const tenantId = await signedTenant();
    await asSuperuser(async (q) => {
      await q(`DELETE FROM log_checkpoints WHERE tenant_id = $1`, [tenantId]);
      await q(`DELETE FROM log_chains WHERE tenant_id = $1`, [tenantId]);
    });
    const result = await verify(tenantId);
    expect(result.valid).toBe(false);
    expect(result.logs).toBe(25);
    expect(result.firstInvalidLog).toMatchObject({ position: 1 });
    expect(result.firstInvalidLog!.reason).toMatch(/head was rolled back or removed/);
  });

  it('detects a forged checkpoint and an altered one', async () => {
    const tenantId = await signedTenant();
    const otherKey = generateKeyPairSync('ed25519').privateKey;
    const head = await logs.chainHead(tenantId);
    const signedAt = new Date();
    const forgedSignature = sign(null, checkpointMessage({ tenantId, position: 25, hash: head.hash, signedAt }), otherKey);
    await asSuperuser(async (q) => {
      // Signed by a key of the attacker's, but claiming the service's key id.
      await q(`INSERT INTO log_checkpoints (tenant_id, seq, hash, signed_at, key_id, signature) VALUES ($1, 25, decode($2, 'hex'), $3, $4, $5)`, [
        tenantId,
        head.hash,
        signedAt.toISOString(),
        signer.keyId,
        forgedSignature,
      ]);
      await q(`UPDATE log_checkpoints SET hash = sha256('other') WHERE tenant_id = $1 AND seq = 10`, [tenantId]);
    });
    const result = await verify(tenantId);
    expect(result.valid).toBe(false);
    expect(result.invalidCheckpoints.map((c) => c.position).sort()).toEqual([10, 25]);
    for (const c of result.invalidCheckpoints) expect(c.reason).toMatch(/signature does not verify/);
  });

  it('keeps one chain in order when several writers append to one tenant at once, duplicates included', async () => {
    const tenantId = randomUUID();
    // Four pools, as four workers would have.
    const databases = await Promise.all(Array.from({ length: 4 }, () => openDatabase({ url: TEST_DATABASE_URL, dataDir: '', poolSize: 2 })));
    try {
      const batches = Array.from({ length: 24 }, (_, i) => newLogs(tenantId, 50, i * 50));
      // Every batch is also delivered a second time by another writer (a retried job).
      await Promise.all([...batches, ...batches].map((batch, i) => new TypeormLogChainWriter(databases[i % 4]!.dataSource.manager).append(batch)));
      await new SignLogCheckpoints(checkpoints, signer, new SystemClock()).execute();
      const result = await verify(tenantId);
      expect(result).toMatchObject({ valid: true, logs: 1200, head: { position: 1200 }, unsignedLogs: 0 });
      const [{ n }] = await sql('SELECT count(*)::int AS n FROM logs WHERE tenant_id = $1', [tenantId]);
      expect(n).toBe(1200);
    } finally {
      await Promise.all(databases.map((d) => d.close()));
    }
  });

  it("chains a batch sent while its tenant's first batch is still in its locked transaction after that batch, in one statement", async () => {
    const tenantId = randomUUID();
    const database = await openDatabase({ url: TEST_DATABASE_URL, dataDir: '', poolSize: 2 });
    try {
      const manager = database.dataSource.manager;
      const writer = new TypeormLogChainWriter(manager);
      const statements = jest.spyOn(manager, 'query');
      const transactions = jest.spyOn(manager, 'transaction');
      // Two flushes in flight at once, as a lane of the worker sends them: the first creates the head, under lock;
      // the second waits for it and is chained after the head it leaves, instead of being locked (and waiting) too.
      expect(await Promise.all([writer.append(newLogs(tenantId, 5, 0)), writer.append(newLogs(tenantId, 5, 5))])).toEqual([5, 5]);
      expect(transactions).toHaveBeenCalledTimes(1);
      expect(statements.mock.calls.filter(([text]) => /log_chain_append/.test(text))).toHaveLength(1);
      statements.mockRestore();
      transactions.mockRestore();
    } finally {
      await database.close();
    }
    expect(await verify(tenantId)).toMatchObject({ valid: true, logs: 10, head: { position: 10 } });
    const order = await sql('SELECT entity_id FROM logs WHERE tenant_id = $1 ORDER BY seq', [tenantId]);
    expect(order.map((r: { entity_id: string }) => r.entity_id)).toEqual(Array.from({ length: 10 }, (_, i) => `tok_${i}`));
  });

  it('writes a batch in one statement after the head it remembers, and refuses it when that head has moved', async () => {
    const tenantId = randomUUID();
    // A pool of its own, as a worker has: nothing else of the test app's goes through it.
    const database = await openDatabase({ url: TEST_DATABASE_URL, dataDir: '', poolSize: 2 });
    try {
      const manager = database.dataSource.manager;
      const first = new TypeormLogChainWriter(manager);
      const second = new TypeormLogChainWriter(t.database.dataSource.manager);
      await first.append(newLogs(tenantId, 5, 0)); // the tenant's first logs: its head is created, under lock
      const statements = jest.spyOn(manager, 'query');
      const transactions = jest.spyOn(manager, 'transaction');
      // Warm: one call of log_chain_append and nothing else, no transaction.
      expect(await first.append(newLogs(tenantId, 5, 5))).toBe(5);
      expect(statements.mock.calls.map(([text]) => /log_chain_append/.exec(text)?.[0] ?? text)).toEqual(['log_chain_append']);
      expect(transactions).not.toHaveBeenCalled();
      statements.mockRestore();
      transactions.mockRestore();

      await second.append(newLogs(tenantId, 5, 10)); // moves the head behind the first writer's back
      const stale = newLogs(tenantId, 5, 15);
      expect(await first.append(stale)).toBe(5); // refused after the stale head, then written under lock
      expect(await first.append(stale)).toBe(0); // delivered again: nothing new
      expect(await second.append(stale)).toBe(0); // to the other writer too, whose guess is stale as well
      expect(await second.append(newLogs(tenantId, 5, 20))).toBe(5);
    } finally {
      await database.close();
    }
    expect(await verify(tenantId)).toMatchObject({ valid: true, logs: 25, head: { position: 25 } });
    const order = await sql('SELECT entity_id FROM logs WHERE tenant_id = $1 ORDER BY seq', [tenantId]);
    expect(order.map((r: { entity_id: string }) => r.entity_id)).toEqual(Array.from({ length: 25 }, (_, i) => `tok_${i}`));

    // The function itself, given a head that is not the current one: refused, and nothing changed, not even the
    // outbox row it would have delivered.
    const outboxId = randomUUID();
    await sql(
      `INSERT INTO audit_outbox (id, tenant_id, actor_type, entity_type, entity_id, operation, message, created_at)
       VALUES ($1, $2, 'system', 'tenant', $3, 'update', 'pending', now())`,
      [outboxId, tenantId, tenantId],
    );
    const head = await logs.chainHead(tenantId);
    const forged = (position: number) =>
      JSON.stringify([
        {
          id: randomUUID(),
          tenant_id: tenantId,
          actor_type: 'system',
          entity_type: 'tenant',
          entity_id: tenantId,
          operation: 'update',
          message: 'forged',
          created_at: new Date().toISOString(),
          seq: position,
          hash: `\\x${'00'.repeat(32)}`,
        },
      ]);
    const append = (expectedPosition: number, expectedHash: string) =>
      sql('SELECT log_chain_append($1::uuid[], $2::uuid[], $3::uuid[], $4::bigint[], $5::text[], $6::bigint[], $7::text[], $8::json)', [
        [outboxId],
        [tenantId],
        [tenantId],
        [expectedPosition],
        [expectedHash],
        [expectedPosition + 1],
        ['00'.repeat(32)],
        forged(expectedPosition + 1),
      ]);
    await expect(append(head.position - 1, head.hash)).rejects.toMatchObject({ code: 'GHC01' });
    await expect(append(head.position, '11'.repeat(32))).rejects.toMatchObject({ code: 'GHC01' });
    expect(await sql('SELECT count(*)::int AS n FROM audit_outbox WHERE id = $1', [outboxId])).toEqual([{ n: 1 }]);
    expect(await logs.chainHead(tenantId)).toEqual(head);
    expect(await verify(tenantId)).toMatchObject({ valid: true, logs: 25 });
    await sql('DELETE FROM audit_outbox WHERE id = $1', [outboxId]);
  });

  describe('gatehouse logs verify --tenant', () => {
    const env = { DATABASE_URL: TEST_DATABASE_URL, LOG_SIGNING_KEY: TEST_LOG_SIGNING_KEY, LOG_LEVEL: 'silent' };

    it('exits 0 on a clean tenant and 1 on a tampered one, naming the first log that does not verify', async () => {
      const clean = await signedTenant();
      const ok = await runToCompletion(CLI_MAIN, ['logs', 'verify', '--tenant', clean], env);
      expect(ok.stdout).toContain(`tenant ${clean}: VERIFIED`);
      expect(ok.code).toBe(0);

      const tampered = await signedTenant();
      await asSuperuser((q) => q(`UPDATE logs SET entity_id = 'tok_other' WHERE tenant_id = $1 AND seq = 3`, [tampered]));
      const bad = await runToCompletion(CLI_MAIN, ['logs', 'verify', '--tenant', tampered, '--json'], env);
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.stdout)).toMatchObject({ valid: false, firstInvalidLog: { position: 3, id: await idAt(tampered, 3) } });
    });

    it('refuses a tenant checked against another public key: no checkpoint verifies', async () => {
      const tenantId = await signedTenant();
      const other = join(mkdtempSync(join(tmpdir(), 'gh-verify-')), 'other.pem');
      writeFileSync(other, generateKeyPairSync('ed25519').publicKey.export({ format: 'pem', type: 'spki' }));
      const res = await runToCompletion(CLI_MAIN, ['logs', 'verify', '--tenant', tenantId, '--public-key', other], env);
      expect(res.code).toBe(1);
      expect(res.stdout).toMatch(/not by the given key/);
    });
  });
});
