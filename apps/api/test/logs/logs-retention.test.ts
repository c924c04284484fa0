import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApplyLogRetention,
  ChainVerification,
  CheckpointSigner,
  checkpointMessage,
  CreatedTenant,
  LogCheckpointRepository,
  LogRepository,
  LogRetentionRepository,
  rawPublicKey,
  SystemClock,
  UnitOfWork,
} from '@gatehouse/domain';
import { CLI_MAIN, runToCompletion } from '@gatehouse/test-support/service-process';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { TEST_DATABASE_URL, TEST_LOG_SIGNING_KEY } from '@gatehouse/test-support/test-env';
import { as, auditEvents, createApplication, expectProblem } from '../support/application-fixtures';
import { verifyWhile } from '../support/racing-verification';
import { appendTokenReads, DAY, signCheckpoints, signer, verifierOf } from '../support/retention-fixtures';

jest.setTimeout(120_000);

/** A signing key rotated in after the test key: the trail ends up signed by both. */
const rotated = new CheckpointSigner(() => generateKeyPairSync('ed25519').privateKey);

/**
 * Retention against PostgreSQL: a tenant's period set through the API and the CLI, the worker's use case removing the
 * logs older than it in bounded batches behind a signed anchor, and the verifiers reading the retained trail from it.
 */
describe('log retention', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ LOG_SIGNING_RETIRED_KEYS: rawPublicKey(rotated.publicKey).toString('base64') });
  });
  afterAll(() => t.close());

  const sql = (text: string, params: unknown[] = []) => t.database.dataSource.query(text, params);
  const verify = (tenantId: string, keys = [signer.publicKey]): Promise<ChainVerification> => verifierOf(t).execute(tenantId, keys, undefined, 4);
  const retain = (by = signer, batch = 7) =>
    new ApplyLogRetention(t.app.get(UnitOfWork), t.app.get(LogRetentionRepository), by, new SystemClock()).execute(batch);
  const settings = (tenant: CreatedTenant, body: unknown) => as(t, tenant.key).put('/tenant/settings', body);

  it('removes the logs older than the period in batches behind a signed anchor; the trail verifies from it, online and offline', async () => {
    const tenant = await t.tenant();
    const id = tenant.tenant.id;
    expect((await settings(tenant, { log_retention_days: 30 }).expect(200)).body).toEqual({ log_retention_days: 30, effective_log_retention_days: 30 });
    expect((await as(t, tenant.key).get('/tenant/settings').expect(200)).body).toEqual({ log_retention_days: 30, effective_log_retention_days: 30 });
    const old = await appendTokenReads(t, id, 20, 60 * DAY, 1);
    await signCheckpoints(t); // at 20
    const recent = await appendTokenReads(t, id, 10, DAY, 21);
    await signCheckpoints(t); // at 30

    expect(await retain()).toBeGreaterThanOrEqual(20); // batches of 7: 7, 7, 6
    const left = await sql('SELECT min(seq)::int AS first, count(*)::int AS n FROM logs WHERE tenant_id = $1', [id]);
    expect(left).toEqual([{ first: 21, n: 10 }]);
    // Their ids are forgotten with them (log_ids keeps those of the logs kept).
    const ids = await sql('SELECT id FROM log_ids WHERE id = ANY($1::uuid[])', [[...old, ...recent].map((l) => l.id)]);
    expect(ids.map((r: { id: string }) => r.id).sort()).toEqual(recent.map((l) => l.id).sort());
    const anchors = await sql('SELECT seq::int AS seq FROM log_retention_anchors WHERE tenant_id = $1 ORDER BY seq', [id]);
    expect(anchors.map((a: { seq: number }) => a.seq)).toEqual([7, 14, 20]);
    expect(await retain()).toBe(0); // nothing more is old enough
    const anchor = (await as(t, tenant.key).get('/logs/retention-anchor').expect(200)).body.anchor;
    expect(anchor).toMatchObject({ tenant_id: id, position: 20, key_id: signer.keyId });

    // Retention writes its own logs (one per batch), through the outbox like every change.
    const removals = (await auditEvents(t, { tenantId: id })).filter((e) => e.operation === 'delete');
    expect(removals.map((e) => e.message)).toEqual([
      expect.stringMatching(/^Audit logs up to position 7 removed by the retention period of 30 day\(s\) \(7 log\(s\)\)/),
      expect.stringMatching(/^Audit logs up to position 14 /),
      expect.stringMatching(/^Audit logs up to position 20 .*\(6 log\(s\)\); retention anchor signed with key /),
    ]);

    expect(await verify(id)).toMatchObject({ valid: true, logs: 10, anchor: { position: 20 }, lastVerifiedCheckpoint: { position: 30 }, unsignedLogs: 0 });
    const db = await runToCompletion(CLI_MAIN, ['logs', 'verify', '--tenant', id, '--json'], {
      DATABASE_URL: TEST_DATABASE_URL,
      LOG_SIGNING_KEY: TEST_LOG_SIGNING_KEY,
      LOG_LEVEL: 'silent',
    });
    expect(db.code).toBe(0);
    expect(JSON.parse(db.stdout)).toMatchObject({ valid: true, anchor: { position: 20 } });

    // Offline: the export, the checkpoints, the public keys and the anchor as the API gives them.
    const dir = mkdtempSync(join(tmpdir(), 'gh-retention-'));
    const file = (name: string, body: unknown) => {
      writeFileSync(join(dir, name), typeof body === 'string' ? body : JSON.stringify(body));
      return join(dir, name);
    };
    const exported = file('export.ndjson', (await as(t, tenant.key).get('/logs/export').expect(200)).text);
    const checkpoints = file('checkpoints.json', (await as(t, tenant.key).get('/logs/checkpoints?size=100').expect(200)).body);
    const keys = file('keys.json', (await as(t, tenant.key).get('/logs/public-keys').expect(200)).body);
    const anchorFile = file('anchor.json', { anchor });
    const offline = (...extra: string[]) =>
      runToCompletion(CLI_MAIN, ['logs', 'verify', '--file', exported, '--checkpoints', checkpoints, '--public-key', keys, '--json', ...extra], {});
    const fromAnchor = await offline('--anchor', anchorFile);
    expect(JSON.parse(fromAnchor.stdout)).toMatchObject({ valid: true, logs: 10, anchor: { position: 20 } });
    expect(fromAnchor.code).toBe(0);
    // Without the anchor the trail starts at 21 where 1 is expected: removed logs are never silently accepted.
    const withoutAnchor = await offline();
    expect(withoutAnchor.code).toBe(1);
    expect(JSON.parse(withoutAnchor.stdout).firstInvalidLog).toMatchObject({ position: 1 });

    // Outside retention the database refuses a removal; a superuser's removal is detected.
    await expect(sql('DELETE FROM logs WHERE tenant_id = $1 AND seq = 25', [id])).rejects.toMatchObject({ code: '42501' });
    await t.database.dataSource.transaction(async (em) => {
      await em.query('SET LOCAL session_replication_role = replica');
      await em.query('DELETE FROM logs WHERE tenant_id = $1 AND seq IN (21, 25)', [id]);
    });
    const tampered = await verify(id);
    expect(tampered.valid).toBe(false);
    expect(tampered.firstInvalidLog).toMatchObject({ position: 21, reason: expect.stringMatching(/no log at position 21 \(a log was deleted\)/) });
  });

  it('a verification that retention overtakes (its anchor moved after the verifier read it) reports no false break', async () => {
    const tenant = await t.tenant();
    const id = tenant.tenant.id;
    await settings(tenant, { log_retention_days: 30 }).expect(200);
    await appendTokenReads(t, id, 10, 60 * DAY, 1);
    await appendTokenReads(t, id, 5, DAY, 11);
    await signCheckpoints(t); // at 15
    const retention = new ApplyLogRetention(t.app.get(UnitOfWork), t.app.get(LogRetentionRepository), signer, new SystemClock());
    await retention.execute(4, 1); // one batch: the anchor at 4
    expect((await t.app.get(LogRetentionRepository).newestAnchor(id))?.position).toBe(4);

    // The verifier reads the anchor (4), then the highest position and its first page: retention runs in between,
    // removing 5-10 and moving the anchor to 10, so the first page starts at 11 where 5 was expected.
    const { result, passes } = await verifyWhile(t, id, [signer.publicKey], () => retention.execute(4, 20));
    expect(await sql('SELECT seq::int AS seq FROM log_retention_anchors WHERE tenant_id = $1 ORDER BY seq', [id])).toEqual([
      { seq: 4 },
      { seq: 8 },
      { seq: 10 },
    ]);
    // Two passes: the first one's break (no log at 5) was found while the anchor moved, so it ran again from 10.
    expect(passes).toBe(2);
    expect(result).toMatchObject({ valid: true, logs: 5, anchor: { position: 10 }, lastVerifiedCheckpoint: { position: 15 } });
    expect(result.firstInvalidLog).toBeUndefined();
  });

  it('verifies a trail signed by successive keys, and lists the current and retired public keys', async () => {
    const tenant = await t.tenant();
    const id = tenant.tenant.id;
    await settings(tenant, { log_retention_days: 10 }).expect(200);
    await appendTokenReads(t, id, 6, 20 * DAY, 1);
    await signCheckpoints(t); // at 6, the test key
    expect(await retain(signer, 4)).toBeGreaterThanOrEqual(4); // anchors at 4 and 6, the test key
    await appendTokenReads(t, id, 5, DAY, 7);
    // The key rotated: the next checkpoint is the new key's (signed for this tenant only: the database is shared).
    const head = await t.app.get(LogRepository).chainHead(id);
    const unsigned = { tenantId: id, position: head.position, hash: head.hash, signedAt: new Date() };
    await t.app.get(LogCheckpointRepository).saveCheckpoints([{ ...unsigned, keyId: rotated.keyId, signature: rotated.sign(checkpointMessage(unsigned)) }]);

    expect(await verify(id, [signer.publicKey, rotated.publicKey])).toMatchObject({
      valid: true,
      logs: 5,
      anchor: { position: 6 },
      lastVerifiedCheckpoint: { position: 11 },
    });
    const newKeyOnly = await verify(id, [rotated.publicKey]);
    expect(newKeyOnly.valid).toBe(false);
    expect(newKeyOnly.firstInvalidLog?.reason).toMatch(/retention anchor is signed by key .*not among the given keys/);
    const oldKeyOnly = await verify(id, [signer.publicKey]);
    expect(oldKeyOnly.invalidCheckpoints).toEqual([expect.objectContaining({ position: 11, reason: expect.stringMatching(/not by the given key/) })]);

    const keys = (await as(t, tenant.key).get('/logs/public-keys').expect(200)).body.data;
    expect(keys).toEqual([
      expect.objectContaining({ key_id: signer.keyId, status: 'current', algorithm: 'Ed25519' }),
      expect.objectContaining({ key_id: rotated.keyId, status: 'retired', public_key: rawPublicKey(rotated.publicKey).toString('base64') }),
    ]);
  });

  it('refuses a bad period or a caller without tenant:update with a ProblemDetails 4xx, changing nothing', async () => {
    const tenant = await t.tenant();
    for (const body of [
      { log_retention_days: -1 },
      { log_retention_days: 0 },
      { log_retention_days: 1.5 },
      { log_retention_days: '30' },
      { log_retention_days: 36_501 },
      {},
    ]) {
      expectProblem(await settings(tenant, body), 400, ['log_retention_days']);
    }
    // The read-only value sent back is ignored, but only as the type GET answers it in.
    expectProblem(await settings(tenant, { log_retention_days: 30, effective_log_retention_days: 'x' }), 400, ['effective_log_retention_days']);
    expect((await as(t, tenant.key).get('/tenant/settings').expect(200)).body).toEqual({ log_retention_days: null, effective_log_retention_days: null });
    const reader = await createApplication(t, tenant.key, { name: 'reader', type: 'management', permissions: ['log:read', 'tenant:read'] });
    expectProblem(await as(t, reader.key).put('/tenant/settings', { log_retention_days: 30 }), 403);
    expect((await as(t, reader.key).get('/tenant/settings').expect(200)).body).toEqual({ log_retention_days: null, effective_log_retention_days: null });
    expect((await as(t, tenant.key).put('/tenant/settings', { log_retention_days: null }).expect(200)).body).toEqual({
      log_retention_days: null,
      effective_log_retention_days: null,
    });
  });

  it('gatehouse tenant retention sets and clears the period, audited, and refuses bad usage', async () => {
    const tenant = await t.tenant();
    const cli = (...args: string[]) => runToCompletion(CLI_MAIN, ['tenant', 'retention', ...args], { DATABASE_URL: TEST_DATABASE_URL, LOG_LEVEL: 'silent' });
    const set = await cli('--tenant', tenant.tenant.id, '--days', '90', '--json');
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ tenant_id: tenant.tenant.id, log_retention_days: 90 });
    expect((await as(t, tenant.key).get('/tenant/settings').expect(200)).body).toEqual({ log_retention_days: 90, effective_log_retention_days: 90 });
    const cleared = await cli('--tenant', tenant.tenant.id, '--forever');
    expect(cleared.stdout).toBe(`tenant ${tenant.tenant.id}: audit logs kept forever\n`);
    const messages = (await auditEvents(t, { entityId: tenant.tenant.id })).filter((e) => e.operation === 'update').map((e) => e.message);
    expect(messages).toEqual([
      expect.stringMatching(/log retention set to 90 day\(s\) \(was forever\)$/),
      expect.stringMatching(/log retention set to forever \(was 90 day\(s\)\)$/),
    ]);

    for (const bad of [['--days', '-3'], ['--days', '1.5'], ['--days', '7', '--forever'], []]) {
      const result = await cli('--tenant', tenant.tenant.id, ...bad);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^gatehouse: tenant retention: .*(--days|--forever)/);
    }
    const tooLong = await cli('--tenant', tenant.tenant.id, '--days', '36501');
    expect(tooLong.code).toBe(1);
    expect(tooLong.stderr).toMatch(/log_retention_days/);
  });
});
