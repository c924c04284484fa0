import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { MIGRATIONS } from '@gatehouse/persistence';
import { withAdmin } from '@gatehouse/test-support/admin-database';
import { API_MAIN, CLI_BIN, REPO_ROOT, runToCompletion, startServiceProcess, WORKER_MAIN } from '@gatehouse/test-support/service-process';
import { ADMIN_DATABASE_URL, TEST_LOG_SIGNING_KEY } from '@gatehouse/test-support/test-env';

// Operators' start-up on real PostgreSQL: `gatehouse --version`, `migrate status|check`, MIGRATE_ON_START=false
// (the Kubernetes migration Job pattern, with a runtime role that has no DDL rights) and BOOTSTRAP_MANAGEMENT_KEY_FILE.
// Each step is a process opening the database: slow on a loaded machine.
jest.setTimeout(240_000);

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const suffix = randomBytes(4).toString('hex');
const DATABASE = `gatehouse_startup_${suffix}`;
const RUNTIME_ROLE = `gatehouse_runtime_${suffix}`;
const url = (user = 'postgres') => ADMIN_DATABASE_URL.replace(/\/\/[^@/]*@/, `//${user}@`).replace(/\/[^/?]*(\?|$)/, `/${DATABASE}$1`);
const MIGRATION_COUNT = MIGRATIONS.length;

const generatedKey = () =>
  `key_${randomBytes(30)
    .toString('base64')
    .replace(/[^0-9A-Za-z]/g, '')
    .padEnd(40, 'x')
    .slice(0, 40)}`;

async function query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url() });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

const gatehouse = (env: Record<string, string>, ...args: string[]) => runToCompletion(CLI_BIN, args, { DATABASE_URL: url(), ...env });
const tables = async () => (await query<{ n: number }>("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'"))[0]!.n;

describe('operators: version, migrations and the first key', () => {
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-startup-'));
    await withAdmin(async (admin) => {
      await admin.query(`CREATE DATABASE "${DATABASE}"`);
      await admin.query(`CREATE ROLE "${RUNTIME_ROLE}" LOGIN`);
    });
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await withAdmin(async (admin) => {
      await admin.query(`DROP DATABASE IF EXISTS "${DATABASE}" WITH (FORCE)`);
      await admin.query(`DROP ROLE IF EXISTS "${RUNTIME_ROLE}"`);
    });
  });

  it('gatehouse --version prints the release without touching a database', async () => {
    const result = await runToCompletion(CLI_BIN, ['--version'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
    expect(result).toEqual({ code: 0, stdout: `gatehouse ${VERSION}\n`, stderr: '' });
  });

  it('on an empty database: migrate status lists every migration pending, check exits 1, and neither creates anything', async () => {
    const status = await gatehouse({}, 'migrate', 'status');
    expect(status.code).toBe(0);
    const lines = status.stdout.trim().split('\n');
    expect(lines.slice(0, -1)).toHaveLength(MIGRATION_COUNT);
    expect(lines.slice(0, -1).every((line) => line.startsWith('[ ] '))).toBe(true);
    expect(lines.at(-1)).toBe(`0 applied, ${MIGRATION_COUNT} pending: run \`gatehouse migrate\``);
    const check = await gatehouse({}, 'migrate', 'check');
    expect(check).toEqual({ code: 1, stdout: `0 applied, ${MIGRATION_COUNT} pending: run \`gatehouse migrate\`\n`, stderr: '' });
    expect(await tables()).toBe(0);
  });

  it('with MIGRATE_ON_START=false, the api and the worker refuse to start while migrations are pending, with one line, and migrate nothing', async () => {
    for (const script of [API_MAIN, WORKER_MAIN]) {
      const result = await runToCompletion(script, [], {
        DATABASE_URL: url(),
        MIGRATE_ON_START: 'false',
        REDIS_URL: 'redis://127.0.0.1:6379/15',
        LOG_SIGNING_KEY: TEST_LOG_SIGNING_KEY,
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        new RegExp(
          `^gatehouse( worker)?: failed to start: ${MIGRATION_COUNT} database migration\\(s\\) pending \\(InitialSchema1763700000000, \\.\\.\\.\\) and MIGRATE_ON_START=false: run \`gatehouse migrate\``,
        ),
      );
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(await tables()).toBe(0);
  });

  it('after `gatehouse migrate`, status shows them applied in order and check exits 0', async () => {
    const migrate = await gatehouse({}, 'migrate');
    expect(migrate.code).toBe(0);
    expect(migrate.stdout).toMatch(
      new RegExp(`^applied ${MIGRATION_COUNT} migration\\(s\\): InitialSchema1763700000000, AuditLogs1763700000300, Proxies1763730000000`),
    );
    const status = await gatehouse({}, 'migrate', 'status', '--json');
    expect(status.code).toBe(0);
    const parsed = JSON.parse(status.stdout) as { applied: string[]; pending: string[]; unknown: string[] };
    expect(parsed).toMatchObject({ pending: [], unknown: [] });
    expect(parsed.applied).toHaveLength(MIGRATION_COUNT);
    expect(await gatehouse({}, 'migrate', 'check')).toEqual({ code: 0, stdout: `${MIGRATION_COUNT} applied, up to date\n`, stderr: '' });
  });

  it('a runtime role without DDL rights starts with MIGRATE_ON_START=false and the supplied first key, which works and is never printed', async () => {
    await query(`GRANT USAGE ON SCHEMA public TO "${RUNTIME_ROLE}"`);
    await query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "${RUNTIME_ROLE}"`);
    await query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO "${RUNTIME_ROLE}"`);
    await query(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
    const key = generatedKey();
    const keyFile = join(dir, 'management-key');
    writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
    const env = {
      DATABASE_URL: url(RUNTIME_ROLE),
      MIGRATE_ON_START: 'false',
      BOOTSTRAP_MANAGEMENT_KEY_FILE: keyFile,
      LOG_SIGNING_KEY: TEST_LOG_SIGNING_KEY,
      REACTOR_POOL_SIZE: '1',
    };
    const api = await startServiceProcess(env);
    try {
      const res = await fetch(`${api.baseUrl}/applications/key`, { headers: { 'svc-api-key': key } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ type: 'management' });
      const live = await fetch(`${api.baseUrl}/health/live`);
      expect(await live.json()).toEqual({ status: 'ok', version: VERSION });
    } finally {
      expect(await api.stop()).toBe(0);
    }
    expect(api.output()).not.toContain(key);
    expect(api.output()).not.toContain('shown once');
    expect(api.stdout()).toContain("tenant 'default' created with the management key of BOOTSTRAP_MANAGEMENT_KEY_FILE");
    // Only its hash is stored.
    const stored = await query<{ key_hash: string }>("SELECT a.key_hash FROM applications a JOIN tenants t ON t.id = a.tenant_id WHERE t.name = 'default'");
    expect(stored).toEqual([{ key_hash: createHash('sha256').update(key).digest('hex') }]);

    // A later start with another key creates nothing and leaves the first key working.
    writeFileSync(keyFile, generatedKey());
    const again = await startServiceProcess(env);
    try {
      expect((await fetch(`${again.baseUrl}/applications/key`, { headers: { 'svc-api-key': key } })).status).toBe(200);
    } finally {
      expect(await again.stop()).toBe(0);
    }
    expect(await query('SELECT id FROM tenants')).toHaveLength(1);
  });

  it('refuses a malformed BOOTSTRAP_MANAGEMENT_KEY_FILE with one line that does not echo it', async () => {
    const keyFile = join(dir, 'bad-key');
    writeFileSync(keyFile, 'key_short-and-secret');
    const result = await runToCompletion(API_MAIN, [], { DATABASE_URL: url(), BOOTSTRAP_MANAGEMENT_KEY_FILE: keyFile });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'gatehouse: configuration error: BOOTSTRAP_MANAGEMENT_KEY(_FILE) must hold a key as Gatehouse generates them: key_ and 40 letters or digits\n',
    );
  });

  it('refuses three bad variables at once, one line each, without echoing the secret', async () => {
    const result = await runToCompletion(API_MAIN, [], { DATABASE_URL: url(), PORT: 'http', VAULT_KEY: 'hunter2-is-no-key', LOG_LEVEL: 'chatty' });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      [
        "gatehouse: configuration error: PORT must be an integer from 0 to 65535, got 'http'",
        'gatehouse: configuration error: VAULT_KEY must be a 32-byte key as base64 or hex (openssl rand -base64 32)',
        "gatehouse: configuration error: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got 'chatty'",
        '',
      ].join('\n'),
    );
  });
});
