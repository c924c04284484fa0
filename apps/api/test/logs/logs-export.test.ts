import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSigningKey } from '@gatehouse/config';
import {
  AuditEvent,
  CheckpointSigner,
  CreatedTenant,
  LogChainWriter,
  LogCheckpointRepository,
  LogRepository,
  SignLogCheckpoints,
  SystemClock,
} from '@gatehouse/domain';
import { CLI_MAIN, runToCompletion } from '@gatehouse/test-support/service-process';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { TEST_LOG_SIGNING_KEY } from '@gatehouse/test-support/test-env';

jest.setTimeout(180_000);

const signer = new CheckpointSigner(() => parseSigningKey(TEST_LOG_SIGNING_KEY));
const tmp = () => mkdtempSync(join(tmpdir(), 'gh-export-'));

function seedLogs(tenantId: string, count: number, from = 0): AuditEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    id: randomUUID(),
    tenantId,
    actorId: i % 3 === 0 ? null : randomUUID(),
    actorType: i % 3 === 0 ? ('system' as const) : ('application' as const),
    entityType: i % 2 === 0 ? 'token' : 'card',
    entityId: `e${from + i}`,
    operation: 'read' as const,
    message: i === 6 ? '=HYPERLINK("x"), then a\nnew line' : i === 8 ? 'Total;=1+1|@SUM(A1)' : `Seeded log ${from + i}`,
    createdAt: new Date(Date.UTC(2026, 0, 1) + (from + i) * 1000),
  }));
}

/** Every log a relay moves from the outbox (no worker runs in these tests): the api's own logs, chained. */
async function relayAll(t: TestApp): Promise<void> {
  await t.app.get(LogChainWriter).relayOutbox(new Date(Date.now() + 60_000), 10_000);
}

describe('GET /logs/export', () => {
  let t: TestApp;
  let tenant: CreatedTenant;
  const COUNT = 2500;

  beforeAll(async () => {
    t = await startTestApp();
    tenant = await t.tenant();
    const writer = t.app.get(LogChainWriter);
    for (let i = 0; i < COUNT; i += 500) await writer.append(seedLogs(tenant.tenant.id, 500, i));
    await new SignLogCheckpoints(t.app.get(LogCheckpointRepository), signer, new SystemClock()).execute();
  });
  afterAll(() => t.close());

  const exportOf = (query: string, key = tenant.key) =>
    t
      .http()
      .get(`/logs/export${query}`)
      .set('SVC-API-KEY', key)
      .buffer(true)
      .parse((res, done) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => done(null, text));
      });

  it('streams every log in chain order as NDJSON, each with its position and hash, up to the head at the start', async () => {
    const res = await exportOf('').expect(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers['x-chain-position']).toBe(String(COUNT));
    const lines = (res.body as string)
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(COUNT);
    expect(lines.map((l) => l.position)).toEqual(Array.from({ length: COUNT }, (_, i) => i + 1));
    expect(lines[6]).toMatchObject({ tenant_id: tenant.tenant.id, actor_type: 'system', entity_id: 'e6', hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(lines[6]).not.toHaveProperty('actor_id');
  });

  it('takes the filters of GET /logs', async () => {
    const res = await exportOf('?entity_type=card&start_date=2026-01-01T00:10:00Z&end_date=2026-01-01T00:20:00Z').expect(200);
    const lines = (res.body as string)
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    // Seconds 600..1199, odd ones are cards.
    expect(lines).toHaveLength(300);
    expect(lines.every((l) => l.entity_type === 'card')).toBe(true);
    expect(lines.map((l) => l.position)).toEqual([...lines.map((l) => l.position)].sort((a, b) => a - b));
  });

  it('writes CSV with a header, RFC 4180 quoting and formula cells defused', async () => {
    const res = await exportOf('?format=csv&entity_type=token').expect(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    const text = res.body as string;
    expect(
      text.startsWith('position,id,tenant_id,actor_id,actor_type,entity_type,entity_id,operation,message,created_at,request_id,source_ip,user_agent,hash\r\n'),
    ).toBe(true);
    expect(text).toContain(`,"'=HYPERLINK(""x""), then a\nnew line",`);
    // A formula after a separator other than the comma (a spreadsheet that splits on `;` or `|`) is defused too.
    expect(text).toContain(`,"Total;'=1+1|'@SUM(A1)",`);
    // Header + one row per token log.
    expect(text.trimEnd().split('\r\n')).toHaveLength(1 + COUNT / 2);
  });

  it('refuses a bad format or filter with a 400 and a key without log:read with a 403', async () => {
    const bad = await t.http().get('/logs/export?format=xml').set('SVC-API-KEY', tenant.key).expect(400);
    expect(bad.body.errors).toHaveProperty('format');
    await t.http().get('/logs/export?actor_id=nope').set('SVC-API-KEY', tenant.key).expect(400);
    const created = await t
      .http()
      .post('/applications')
      .set('SVC-API-KEY', tenant.key)
      .send({ name: 'no logs', type: 'management', permissions: ['proxy:read'] })
      .expect(201);
    await t.http().get('/logs/export').set('SVC-API-KEY', created.body.key).expect(403);
  });

  it('is itself recorded as an audit log (operation read), with the request it came from', async () => {
    const own = await t.tenant();
    await t
      .http()
      .get('/logs/export?format=csv&entity_type=proxy')
      .set('SVC-API-KEY', own.key)
      .set('x-request-id', 'export-req-1')
      .set('user-agent', 'auditor-tool/1.0')
      .expect(200);
    await relayAll(t);
    const res = await t.http().get('/logs?request_id=export-req-1').set('SVC-API-KEY', own.key).expect(200);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0]).toMatchObject({
      actor_id: own.application.id,
      actor_type: 'application',
      entity_type: 'tenant',
      entity_id: own.tenant.id,
      operation: 'read',
      message: 'Audit logs exported (csv; entity_type=proxy)',
      request_id: 'export-req-1',
      source_ip: '127.0.0.1',
      user_agent: 'auditor-tool/1.0',
    });
  });

  it('verifies offline with the CLI from the export, the checkpoints and the public key, and names a tampered line', async () => {
    const dir = tmp();
    const exported = (await exportOf('').expect(200)).body as string;
    const checkpoints = await t.http().get('/logs/checkpoints').set('SVC-API-KEY', tenant.key).expect(200);
    expect(checkpoints.body.data[0]).toMatchObject({ tenant_id: tenant.tenant.id, position: COUNT, key_id: signer.keyId });
    const publicKey = await t.http().get('/logs/public-key').set('SVC-API-KEY', tenant.key).expect(200);
    expect(publicKey.body).toMatchObject({ algorithm: 'Ed25519', key_id: signer.keyId });
    writeFileSync(join(dir, 'export.ndjson'), exported);
    writeFileSync(join(dir, 'checkpoints.json'), JSON.stringify(checkpoints.body));
    writeFileSync(join(dir, 'public-key.json'), JSON.stringify(publicKey.body));
    const args = verifyArgs(dir, join(dir, 'public-key.json'));
    const ok = await runToCompletion(CLI_MAIN, args, {});
    expect(ok.stdout).toContain('VERIFIED');
    expect(ok.code).toBe(0);

    const lines = exported.trimEnd().split('\n');
    const victim = JSON.parse(lines[99]!);
    lines[99] = JSON.stringify({ ...victim, message: 'nothing happened' });
    writeFileSync(join(dir, 'export.ndjson'), `${lines.join('\n')}\n`);
    const bad = await runToCompletion(CLI_MAIN, [...args, '--json'], {});
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout).firstInvalidLog).toMatchObject({ position: 100, id: victim.id });
  });

  it('stops reading the database when the client goes away', async () => {
    const repo = t.app.get(LogRepository);
    const big = await t.tenant();
    for (let i = 0; i < 30_000; i += 2000) await t.app.get(LogChainWriter).append(seedLogs(big.tenant.id, 2000, i));
    let slices = 0;
    const original = repo.chainSlice.bind(repo);
    repo.chainSlice = (...args) => {
      slices += 1;
      return original(...args);
    };
    const server = t.app.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      await new Promise<void>((resolve, reject) => {
        const req = httpRequest({ port, host: '127.0.0.1', path: '/logs/export', headers: { 'svc-api-key': big.key } }, (res) => {
          expect(res.statusCode).toBe(200);
          res.once('data', () => {
            // A first chunk, then the client is gone.
            res.pause();
            req.destroy();
            resolve();
          });
        });
        req.on('error', (error) => (error.message.includes('socket hang up') ? undefined : reject(error)));
        req.end();
      });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const afterClose = slices;
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(slices).toBe(afterClose);
      // 30 slices of 1,000 make the whole export; the client left long before.
      expect(slices).toBeLessThan(30);
      // And the service goes on serving.
      await t.http().get('/logs?size=1').set('SVC-API-KEY', big.key).expect(200);
    } finally {
      repo.chainSlice = original;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

/** `gatehouse logs verify` of the export.ndjson and checkpoints.json written in `dir`, with `publicKey` (a file or hex). */
function verifyArgs(dir: string, publicKey: string): string[] {
  return ['logs', 'verify', '--file', join(dir, 'export.ndjson'), '--checkpoints', join(dir, 'checkpoints.json'), '--public-key', publicKey];
}

describe('the worked example of docs/audit-trail.md', () => {
  it('verifies with gatehouse logs verify, offline', async () => {
    const doc = readFileSync(join(__dirname, '../../../../docs/audit-trail.md'), 'utf8');
    const section = doc.slice(doc.indexOf('**Worked example**'));
    const exportLines = section.match(/^\{"id":.*\}$/gm)!.slice(0, 2);
    const signature = /with signature `([^`]+)`/.exec(section)![1]!;
    const dir = tmp();
    writeFileSync(join(dir, 'export.ndjson'), `${exportLines.join('\n')}\n`);
    writeFileSync(
      join(dir, 'checkpoints.json'),
      JSON.stringify([
        {
          tenant_id: '6f1c1e0e-3b7a-4a43-9f55-0a4b7e1d2c10',
          position: 2,
          hash: 'f6dd1773b0c29dd1a4c013eaef7dcc53424c665699b16070296573476f90d8e4',
          signed_at: '2026-11-24T09:00:30.000Z',
          key_id: '21fe31dfa154a261',
          signature,
        },
      ]),
    );
    const res = await runToCompletion(CLI_MAIN, [...verifyArgs(dir, 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a'), '--json'], {});
    expect(JSON.parse(res.stdout)).toMatchObject({ valid: true, logs: 2, unsignedLogs: 0, lastVerifiedCheckpoint: { position: 2 } });
    expect(res.code).toBe(0);
  });
});

describe('where a request came from', () => {
  /**
   * In an app started with `env`: creates an application with the request headers given, relays the outbox, and
   * returns the log of that create (found by its request id), with the app and tenant for further checks; `check`
   * runs before the app is closed.
   */
  async function logOfRequest(
    env: Record<string, string>,
    headers: Record<string, string>,
    check: (log: Record<string, unknown>, t: TestApp, tenant: CreatedTenant) => Promise<void>,
  ): Promise<void> {
    const t = await startTestApp(env);
    try {
      const tenant = await t.tenant();
      const req = t.http().post('/applications').set('SVC-API-KEY', tenant.key);
      for (const [name, value] of Object.entries(headers)) req.set(name, value);
      await req.send({ name: headers['x-request-id'], type: 'management', permissions: ['log:read'] }).expect(201);
      await relayAll(t);
      const res = await t.http().get(`/logs?request_id=${headers['x-request-id']}`).set('SVC-API-KEY', tenant.key).expect(200);
      expect(res.body.data).toHaveLength(1);
      await check(res.body.data[0], t, tenant);
    } finally {
      await t.close();
    }
  }

  it('records request_id, user_agent and the socket address, ignoring X-Forwarded-For from an untrusted peer', async () => {
    const headers = { 'x-request-id': 'req-untrusted', 'user-agent': 'ua-test', 'x-forwarded-for': '198.51.100.9' };
    await logOfRequest({}, headers, async (log, t, tenant) => {
      expect(log).toMatchObject({ request_id: 'req-untrusted', source_ip: '127.0.0.1', user_agent: 'ua-test', operation: 'create' });
      // The tenant's own creation (no request) carries none of them, and the actor filter finds the calling key's logs.
      const byActor = await t.http().get(`/logs?actor_id=${tenant.application.id}`).set('SVC-API-KEY', tenant.key).expect(200);
      expect(byActor.body.data.map((l: any) => l.request_id)).toEqual(['req-untrusted']);
      const system = (await t.http().get('/logs?entity_type=tenant').set('SVC-API-KEY', tenant.key).expect(200)).body.data[0];
      expect(system).not.toHaveProperty('request_id');
      expect(system).not.toHaveProperty('source_ip');
    });
  });

  it('believes X-Forwarded-For from a trusted proxy, only up to the first untrusted hop', async () => {
    // The client forged the first entry; 203.0.113.5 is what the trusted 10.1.2.3 saw.
    const headers = { 'x-request-id': 'req-trusted', 'x-forwarded-for': '192.0.2.66, 203.0.113.5, 10.1.2.3' };
    await logOfRequest({ TRUSTED_PROXIES: '127.0.0.0/8, ::1/128, 10.0.0.0/8' }, headers, async (log) => {
      expect(log.source_ip).toBe('203.0.113.5');
    });
  });
});
