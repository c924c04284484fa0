import { join } from 'node:path';
import { Client } from 'pg';
import { CLI_BIN, REPO_ROOT, runToCompletion } from '@gatehouse/test-support/service-process';
import { TEST_DATABASE_URL } from '@gatehouse/test-support/test-env';

/** `gatehouse`, the operators' command (package.json bin), as a process against the test database. */
const env = { DATABASE_URL: TEST_DATABASE_URL };
const gatehouse = (...args: string[]) => runToCompletion(CLI_BIN, args, env);
const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

async function tenantsNamed(name: string): Promise<number> {
  const client = new Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return (await client.query('SELECT count(*)::int AS n FROM tenants WHERE name = $1', [name])).rows[0].n;
  } finally {
    await client.end();
  }
}

async function keyStatus(baseKey: string): Promise<{ type: string; permissions: string[] } | number> {
  // The key checked by the service's own use case, over the same database, as a request would be.
  const { startTestApp } = await import('@gatehouse/test-support/test-app');
  const app = await startTestApp();
  try {
    const res = await app.http().get('/applications/key').set('svc-api-key', baseKey);
    return res.status === 200 ? res.body : res.status;
  } finally {
    await app.close();
  }
}

// Each database command is a process that opens the database (about 1.5 s of CPU): a test running seven of them takes
// about 10 s on an idle machine and over 60 s on a loaded one.
jest.setTimeout(180_000);

describe('gatehouse (the CLI)', () => {
  it('prints its help and exits 0, for every command too', async () => {
    const help = await gatehouse('--help');
    expect(help.code).toBe(0);
    for (const command of [
      'tenant create',
      'tenant list',
      'tenant show',
      'tenant rotate-key',
      'migrate status',
      'migrate check',
      'migrate',
      'apply',
      'diff',
      'export',
      'openapi',
      '--version',
    ]) {
      expect(help.stdout).toContain(command);
    }
    const one = await gatehouse('tenant', 'rotate-key', '--help');
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^usage: gatehouse tenant rotate-key TENANT \[--json\]/);
  });

  it('loads neither Nest, TypeORM nor class-validator until a command needs the database', async () => {
    // `--help`, usage errors and `logs verify --file` must answer at once, also on a loaded machine: loading
    // @nestjs/swagger alone costs about 0.7 s of CPU (a loaded CI machine made that 10 s per call).
    const probe = [
      `require(${JSON.stringify(join(REPO_ROOT, 'dist/apps/api/src/cli/commands.js'))});`,
      `process.stdout.write(JSON.stringify(Object.keys(require.cache).filter((f) => /node_modules[\\/](@nestjs|typeorm|class-validator|class-transformer)[\\/]/.test(f))));`,
    ].join('\n');
    const loaded = await runToCompletion('-e', [probe], {});
    expect(loaded.stderr).toBe('');
    expect(JSON.parse(loaded.stdout)).toEqual([]);
  });

  it.each([
    [['frobnicate'], /^gatehouse: unknown command 'frobnicate'/],
    [['tenant', 'create'], /^gatehouse: tenant create needs --name NAME\n$/],
    [['tenant', 'create', '--name', 'x', '--colour', 'red'], /^gatehouse: tenant create: Unknown option '--colour'/],
    [['tenant', 'show'], /^gatehouse: tenant show needs TENANT/],
    [['tenant', 'show', 'a', 'b'], /^gatehouse: tenant show takes no argument 'b'/],
    [['migrate', 'now'], /^gatehouse: migrate takes no argument 'now'/],
    [['migrate', 'check', 'now'], /^gatehouse: migrate check takes no argument 'now'/],
  ])('refuses %j with one line and exit code 2', async (args, message) => {
    const result = await gatehouse(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stdout).toBe('');
  });

  it('does not take the next option as a value: `--name --json` creates nothing', async () => {
    const before = await tenantsNamed('--json');
    const result = await gatehouse('tenant', 'create', '--name', '--json');
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain("'--name'");
    expect(await tenantsNamed('--json')).toBe(before);
  });

  it('creates a tenant with a working management key, refuses the same name again, and lists and shows it', async () => {
    const name = unique('cli');
    const created = await gatehouse('tenant', 'create', '--name', name, '--json');
    expect(created.code).toBe(0);
    const out = JSON.parse(created.stdout);
    expect(out.tenant).toEqual({ id: expect.any(String), name, created_at: expect.any(String) });
    expect(out.application).toMatchObject({ type: 'management', tenant_id: out.tenant.id, key: expect.stringMatching(/^key_[0-9A-Za-z]{32,}$/) });
    expect(await keyStatus(out.application.key)).toMatchObject({ type: 'management' });

    const again = await gatehouse('tenant', 'create', '--name', name);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`gatehouse: A tenant named '${name}' already exists\n`);
    expect(await tenantsNamed(name)).toBe(1);

    const list = await gatehouse('tenant', 'list', '--json');
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toContainEqual(out.tenant);
    expect((await gatehouse('tenant', 'list')).stdout).toMatch(new RegExp(`^${out.tenant.id}\\s+\\S+\\s+${name}$`, 'm'));

    for (const ref of [name, out.tenant.id]) {
      const shown = await gatehouse('tenant', 'show', ref, '--json');
      expect(shown.code).toBe(0);
      expect(JSON.parse(shown.stdout)).toMatchObject({ ...out.tenant, management_applications: [{ id: out.application.id, type: 'management' }] });
    }
    const missing = await gatehouse('tenant', 'show', unique('nobody'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^gatehouse: Tenant '[^']+' not found\n$/);
  });

  it('rotate-key gives the tenant a new management key and the old one stops working', async () => {
    const name = unique('rotate');
    const created = JSON.parse((await gatehouse('tenant', 'create', '--name', name, '--json')).stdout);
    const oldKey: string = created.application.key;
    const rotated = await gatehouse('tenant', 'rotate-key', name, '--json');
    expect(rotated.code).toBe(0);
    const out = JSON.parse(rotated.stdout);
    expect(out).toMatchObject({ recreated: false, tenant: { id: created.tenant.id }, application: { id: created.application.id, type: 'management' } });
    expect(out.application.key).not.toBe(oldKey);
    expect(await keyStatus(oldKey)).toBe(401);
    expect(await keyStatus(out.application.key)).toMatchObject({ type: 'management', permissions: created.application.permissions });

    const text = await gatehouse('tenant', 'rotate-key', created.tenant.id);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^management application \S+ of tenant \S+ has a new key; the previous key no longer works\nmanagement key: key_\w+\n$/);
  });

  it('migrate says there is nothing pending on a migrated database', async () => {
    const result = await gatehouse('migrate');
    expect(result).toEqual({ code: 0, stdout: 'no pending migrations\n', stderr: '' });
  });

  it('fails with one line when the database cannot be reached, one a refused variable when the configuration is wrong', async () => {
    const down = await runToCompletion(CLI_BIN, ['tenant', 'list'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^gatehouse: cannot reach the database: connect ECONNREFUSED 127\.0\.0\.1:1\n$/);
    const wrong = await runToCompletion(CLI_BIN, ['tenant', 'list'], { DATABASE_URL: 'mysql://x' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toBe("gatehouse: configuration error: DATABASE_URL must use postgres: or postgresql:, got 'mysql:'\n");
    const twice = await runToCompletion(CLI_BIN, ['tenant', 'list'], { DATABASE_URL: 'mysql://x', DATABASE_POOL_SIZE: 'many' });
    expect(twice.code).toBe(1);
    expect(twice.stderr).toBe(
      "gatehouse: configuration error: DATABASE_URL must use postgres: or postgresql:, got 'mysql:'\ngatehouse: configuration error: DATABASE_POOL_SIZE must be an integer from 1 to 200, got 'many'\n",
    );
  });

  it('openapi prints the document without a database', async () => {
    const result = await runToCompletion(CLI_BIN, ['openapi'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      openapi: expect.stringMatching(/^3\./),
      paths: expect.objectContaining({ '/applications': expect.anything() }),
    });
  });
});
