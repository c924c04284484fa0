import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_MAIN, runToCompletion } from '@gatehouse/test-support/service-process';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { as, auditEvents, Caller, createApplication, newTenant } from '../support/application-fixtures';

/**
 * `gatehouse apply`, `diff` and `export` (docs/operations/configuration-as-code.md): the built CLI, run as operators
 * run it, against the API listening on a port over the real database. Every change is an ordinary API call, so each
 * leaves its audit record.
 */
// Each command is a process (1-3 s idle; several times that on a loaded machine), up to nine of them a test.
jest.setTimeout(300_000);

const REQUEST_CODE =
  "module.exports = async function (req) {\n  return { body: req.args.body, headers: { ...req.args.headers, 'x-api-key': req.configuration.API_KEY } };\n};\n";

/** A file with two applications and two proxies; `change` edits it as a later commit would. */
function gatehouseYaml(change: { destination?: string; billingPermissions?: string; withStatus?: boolean } = {}): string {
  return `version: 1
applications:
  - name: billing
    type: private
    permissions: ${change.billingPermissions ?? '[token:create, token:read]'}
    rules:
      - priority: 1
        description: Reveal high-value cards
        container: /pci/high/
        transform: reveal
        permissions: [token:read]
    rate_limit: { limit: 100, window_seconds: 60 }
  - name: auditor
    type: management
    permissions: [log:read, application:read]
proxies:
  - name: payments
    destination_url: ${change.destination ?? 'https://api.example.com/v1'}
    application: billing
    configuration:
      API_KEY: \${env:PAYMENTS_API_KEY}
      REGION: eu
      GREETING: "hello $\${user}"
    request_transform: { code_file: ./transforms/payments.js }
${
  change.withStatus === false
    ? ''
    : `  - name: status
    destination_url: https://status.example.com
    require_auth: false
    response_transform:
      code: |
        module.exports = async (res) => ({ status: res.args.status, body: { up: true } });
`
}`;
}

describe('gatehouse apply, diff and export', () => {
  let t: TestApp;
  let url: string;
  let dir: string;

  beforeAll(async () => {
    t = await startTestApp();
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-apply-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t?.close();
  });

  function gatehouse(caller: { key: string }, args: string[], env: Record<string, string> = {}) {
    return runToCompletion(CLI_MAIN, args, { GATEHOUSE_URL: url, GATEHOUSE_API_KEY: caller.key, LOG_LEVEL: 'silent', PAYMENTS_API_KEY: 's3cret', ...env });
  }

  /** A directory of its own with gatehouse.yaml and the transform file it names. */
  function workspace(name: string, yaml: string): string {
    const root = join(dir, name);
    mkdirSync(join(root, 'transforms'), { recursive: true });
    writeFileSync(join(root, 'transforms/payments.js'), REQUEST_CODE);
    writeFileSync(join(root, 'gatehouse.yaml'), yaml);
    return join(root, 'gatehouse.yaml');
  }

  async function tenantState(caller: Caller) {
    const applications = (await as(t, caller.key).get('/applications?size=100').expect(200)).body.data as any[];
    const proxies = (await as(t, caller.key).get('/proxies?size=100').expect(200)).body.data as any[];
    return { applications, proxies, byName: (name: string) => [...applications, ...proxies].find((e) => e.name === name) };
  }

  const changesBy = async (caller: Caller) =>
    (await auditEvents(t, { tenantId: caller.tenantId })).filter(
      (e) => e.actor_id === caller.applicationId && ['create', 'update', 'delete'].includes(e.operation),
    );

  it('creates from scratch after showing the plan, and a second apply changes nothing and says so', async () => {
    const admin = await newTenant(t);
    const file = workspace('scratch', gatehouseYaml());

    const diff = await gatehouse(admin, ['diff', '-f', file]);
    expect([diff.code, diff.stderr]).toEqual([2, '']);
    expect(diff.stdout).toContain(
      '  + application "billing" (private)\n  + application "auditor" (management)\n  + proxy "payments" -> https://api.example.com/v1\n',
    );
    expect(diff.stdout).toContain('Plan: 4 to create, 0 to update, 0 to delete, 0 unchanged.');
    expect((await tenantState(admin)).proxies).toEqual([]);
    const dryRun = await gatehouse(admin, ['apply', '--dry-run', '-f', file]);
    expect([dryRun.code, dryRun.stdout]).toEqual([2, diff.stdout]);

    const applied = await gatehouse(admin, ['apply', '-f', file]);
    expect([applied.code, applied.stderr]).toEqual([0, '']);
    expect(applied.stdout.indexOf('Plan: 4 to create')).toBeLessThan(applied.stdout.indexOf('created application "billing"'));
    const keys = Object.fromEntries([...applied.stdout.matchAll(/^ {2}(billing|auditor): (key_\w+)$/gm)].map((m) => [m[1], m[2]]));
    expect(Object.keys(keys).sort()).toEqual(['auditor', 'billing']);
    // The printed key is the application's: the auditor reads with it.
    expect((await as(t, keys.auditor!).get('/applications/key').expect(200)).body.name).toBe('auditor');

    const state = await tenantState(admin);
    const billing = state.byName('billing');
    expect(billing).toMatchObject({ type: 'private', permissions: ['token:create', 'token:read'], rate_limit: { limit: 100, window_seconds: 60 } });
    expect(billing.rules).toEqual([
      { description: 'Reveal high-value cards', priority: 1, container: '/pci/high/', transform: 'reveal', permissions: ['token:read'] },
    ]);
    expect(state.byName('payments')).toMatchObject({
      destination_url: 'https://api.example.com/v1',
      application_id: billing.id,
      configuration: { API_KEY: 's3cret', REGION: 'eu', GREETING: 'hello ${user}' },
      request_transform: { code: REQUEST_CODE },
      require_auth: true,
    });
    expect(state.byName('status')).toMatchObject({ require_auth: false, response_transform: { code: expect.stringContaining('up: true') } });
    // Four ordinary API calls, each audited as the management key's.
    expect((await changesBy(admin)).map((e) => `${e.operation} ${e.entity_type}`).sort()).toEqual([
      'create application',
      'create application',
      'create proxy',
      'create proxy',
    ]);

    const again = await gatehouse(admin, ['apply', '-f', file]);
    expect([again.code, again.stderr]).toEqual([0, '']);
    expect(again.stdout).toContain('No changes: the tenant matches the file (4 unchanged).');
    expect(again.stdout).not.toMatch(/key_/);
    expect(await changesBy(admin)).toHaveLength(4);
    expect((await gatehouse(admin, ['diff', '-f', file])).code).toBe(0);
  });

  it('updates the fields that changed, naming them (configuration values never shown)', async () => {
    const admin = await newTenant(t);
    const file = workspace('update', gatehouseYaml());
    expect((await gatehouse(admin, ['apply', '-f', file])).code).toBe(0);
    const before = await tenantState(admin);

    writeFileSync(file, gatehouseYaml({ destination: 'https://api2.example.com/v2', billingPermissions: '[token:read, token:search]' }));
    const diff = await gatehouse(admin, ['diff', '-f', file], { PAYMENTS_API_KEY: 'rotated' });
    expect(diff.code).toBe(2);
    expect(diff.stdout).toContain('  ~ application "billing"\n      permissions: +token:search -token:create\n');
    expect(diff.stdout).toContain(
      '  ~ proxy "payments"\n      destination_url: "https://api.example.com/v1" -> "https://api2.example.com/v2"\n      configuration: ~API_KEY (values not shown)\n',
    );
    expect(diff.stdout).not.toContain('rotated');
    expect(diff.stdout).toContain('Plan: 0 to create, 2 to update, 0 to delete, 2 unchanged.');

    const applied = await gatehouse(admin, ['apply', '-f', file], { PAYMENTS_API_KEY: 'rotated' });
    expect([applied.code, applied.stderr]).toEqual([0, '']);
    const after = await tenantState(admin);
    expect(after.byName('billing')).toMatchObject({ id: before.byName('billing').id, permissions: ['token:read', 'token:search'] });
    expect(after.byName('payments')).toMatchObject({
      id: before.byName('payments').id,
      destination_url: 'https://api2.example.com/v2',
      configuration: { API_KEY: 'rotated', REGION: 'eu', GREETING: 'hello ${user}' },
    });
    expect(
      (await changesBy(admin))
        .filter((e) => e.operation === 'update')
        .map((e) => e.entity_id)
        .sort(),
    ).toEqual([before.byName('billing').id, before.byName('payments').id].sort());
    expect((await gatehouse(admin, ['diff', '-f', file], { PAYMENTS_API_KEY: 'rotated' })).code).toBe(0);
  });

  it('leaves what the file does not name unless --prune, and never deletes the key in use', async () => {
    const admin = await newTenant(t);
    const file = workspace('prune', gatehouseYaml());
    expect((await gatehouse(admin, ['apply', '-f', file])).code).toBe(0);
    await createApplication(t, admin.key, { name: 'by hand', type: 'public', permissions: ['token:create'] });
    writeFileSync(file, gatehouseYaml({ withStatus: false }));

    const kept = await gatehouse(admin, ['apply', '-f', file]);
    expect([kept.code, kept.stderr]).toEqual([0, '']);
    expect(kept.stdout).toContain('not in the file, left as they are (--prune deletes them): application "by hand", proxy "status"');
    expect(kept.stdout).toContain('No changes');
    expect((await tenantState(admin)).byName('status')).toBeDefined();

    const plan = await gatehouse(admin, ['diff', '--prune', '-f', file]);
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('  - proxy "status"\n  - application "by hand"\n');
    const pruned = await gatehouse(admin, ['apply', '--prune', '-f', file]);
    expect([pruned.code, pruned.stderr]).toEqual([0, '']);
    const state = await tenantState(admin);
    expect(state.proxies.map((p) => p.name)).toEqual(['payments']);
    expect(state.applications.map((a) => a.name).sort()).toEqual(['auditor', 'billing', expect.any(String)]);
    expect(state.applications.find((a) => a.id === admin.applicationId)).toBeDefined();
    expect((await changesBy(admin)).filter((e) => e.operation === 'delete')).toHaveLength(2);
    expect((await gatehouse(admin, ['apply', '--prune', '-f', file])).stdout).toContain('No changes');
  });

  it('exports a tenant so that applying the export changes nothing, here or in another tenant', async () => {
    const admin = await newTenant(t);
    expect((await gatehouse(admin, ['apply', '-f', workspace('source', gatehouseYaml())])).code).toBe(0);
    const out = join(dir, 'export');

    // Configuration values as placeholders by default, transform code into files beside the YAML.
    const exported = await gatehouse(admin, ['export', '-o', join(out, 'gatehouse.yaml'), '--code-dir', join(out, 'code')]);
    expect(exported.code).toBe(0);
    const yaml = readFileSync(join(out, 'gatehouse.yaml'), 'utf8');
    expect(yaml).not.toContain('s3cret');
    expect(yaml).not.toMatch(/key_/);
    expect(yaml).toContain('API_KEY: ${env:GATEHOUSE_PAYMENTS_API_KEY}');
    expect(yaml).toContain('code_file: ./code/payments.request.js');
    expect(readFileSync(join(out, 'code/payments.request.js'), 'utf8')).toBe(REQUEST_CODE);
    expect(exported.stderr).toContain("GATEHOUSE_PAYMENTS_API_KEY  (proxy 'payments', API_KEY)");
    const values = { GATEHOUSE_PAYMENTS_API_KEY: 's3cret', GATEHOUSE_PAYMENTS_REGION: 'eu', GATEHOUSE_PAYMENTS_GREETING: 'hello ${user}' };
    const noOp = await gatehouse(admin, ['apply', '--prune', '-f', join(out, 'gatehouse.yaml')], values);
    expect([noOp.code, noOp.stderr]).toEqual([0, '']);
    expect(noOp.stdout).toContain('No changes: the tenant matches the file (4 unchanged).');

    // Inline: the values and the code in the YAML itself, on stdout; a literal ${ is escaped.
    const inline = await gatehouse(admin, ['export', '--inline-configuration']);
    expect(inline.code).toBe(0);
    expect(inline.stdout).toContain('GREETING: hello $${user}');
    writeFileSync(join(out, 'inline.yaml'), inline.stdout);
    expect((await gatehouse(admin, ['diff', '--prune', '-f', join(out, 'inline.yaml')])).code).toBe(0);

    // The same file makes another tenant the same, after which it is a no-op there too.
    const other = await newTenant(t);
    const copied = await gatehouse(other, ['apply', '-f', join(out, 'gatehouse.yaml'), '--keys-out', join(out, 'keys.json')], values);
    expect([copied.code, copied.stderr]).toEqual([0, '']);
    expect(copied.stdout).not.toMatch(/key_/);
    expect(statSync(join(out, 'keys.json')).mode & 0o777).toBe(0o600);
    const written = JSON.parse(readFileSync(join(out, 'keys.json'), 'utf8')).applications;
    expect(written.map((k: any) => k.name).sort()).toEqual(['auditor', 'billing']);
    expect(
      (
        await as(t, written.find((k: any) => k.name === 'auditor').key)
          .get('/applications/key')
          .expect(200)
      ).body.tenant_id,
    ).toBe(other.tenantId);
    expect((await gatehouse(other, ['diff', '-f', join(out, 'gatehouse.yaml')], values)).code).toBe(0);
    // An existing keys file is never overwritten, and then nothing is changed.
    writeFileSync(join(out, 'more.yaml'), 'version: 1\napplications:\n  - { name: extra, type: public, permissions: [token:create] }\n');
    const refused = await gatehouse(other, ['apply', '-f', join(out, 'more.yaml'), '--keys-out', join(out, 'keys.json')]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--keys-out .*keys\.json: exists .*nothing was changed/);
    expect((await tenantState(other)).byName('extra')).toBeUndefined();
  });

  it('refuses an invalid file with every problem and its path at once, changing nothing', async () => {
    const admin = await newTenant(t);
    const file = workspace(
      'invalid',
      `version: 1
colour: blue
applications:
  - { name: twice, type: private, permissions: [token:read] }
  - { name: twice, type: private, permissions: [log:read], nmae: x }
  - { name: soon, type: expiring, permissions: [token:read] }
proxies:
  - name: p
    destination_url: ftp://example.com
    configuration: { PORT: 8080, TOKEN: "\${env:NOT_SET_ANYWHERE}" }
    request_transform: { code_file: ./transforms/missing.js }
    rate_limit: { limit: 0, window_seconds: 60 }
`,
    );
    const result = await gatehouse(admin, ['apply', '-f', file]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')).toEqual([
      `gatehouse: ${file}: 10 problems:`,
      "  applications[1].name: 'twice' is also the name of applications[0]: names must be unique, apply matches by name",
      '  applications[1].nmae: is not allowed',
      "  applications[1].permissions[0]: 'log:read' is not allowed for private applications",
      '  applications[2].type: must be one of private, public, management (expiring applications are not declared)',
      '  colour: is not allowed',
      '  proxies[0].configuration.PORT: must be a string (quote it: "8080")',
      '  proxies[0].configuration.TOKEN: ${env:NOT_SET_ANYWHERE}: the environment variable NOT_SET_ANYWHERE is not set',
      '  proxies[0].destination_url: must be an https:// or http:// URL',
      '  proxies[0].rate_limit.limit: must not be less than 1',
      expect.stringMatching(/^ {2}proxies\[0\]\.request_transform\.code_file: cannot be read: ENOENT/),
      'nothing was changed',
      '',
    ]);
    writeFileSync(file, 'version: 1\napplications:\n  - name: a\n    name: b\n');
    const yaml = await gatehouse(admin, ['diff', '-f', file]);
    expect([yaml.code, yaml.stderr]).toEqual([1, `gatehouse: ${file}: line 4, column 5: duplicated mapping key (not valid YAML)\nnothing was changed\n`]);
    // Wrong arguments exit 1 here (2 means "changes pending" to diff).
    expect((await gatehouse(admin, ['diff'])).code).toBe(1);
    expect((await gatehouse(admin, ['diff', '-f', file, '--bogus'])).code).toBe(1);
    expect(await changesBy(admin)).toEqual([]);
  });

  it('stops at a change the service refuses, saying what was made before it, and still shows the new keys', async () => {
    const admin = await newTenant(t);
    const file = workspace(
      'refused',
      `version: 1
applications:
  - { name: early, type: public, permissions: [token:create] }
proxies:
  - { name: internal, destination_url: "https://10.0.0.1/x" }
`,
    );
    const result = await gatehouse(admin, ['apply', '-f', file]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/created application "early"\n[^]*\n {2}early: key_\w+\n$/);
    expect(result.stderr).toBe(
      'gatehouse: creating proxy "internal": 400 One or more validation errors occurred: destination_url must not be a private, loopback, link-local or otherwise non-public address (1 of 2 changes were made before it; gatehouse diff shows what is left)\n',
    );
    const diff = await gatehouse(admin, ['diff', '-f', file]);
    expect(diff.stdout).toContain('  + proxy "internal" -> https://10.0.0.1/x\n\nPlan: 1 to create, 0 to update, 0 to delete, 1 unchanged.');
  });

  it('tells a management key what it lacks before changing anything', async () => {
    const admin = await newTenant(t);
    const reader = await createApplication(t, admin.key, { name: 'reader', type: 'management', permissions: ['application:read', 'proxy:read'] });
    const file = workspace('lacking', gatehouseYaml());
    const result = await gatehouse(reader, ['apply', '-f', file]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('Plan: 4 to create');
    expect(result.stderr).toBe(
      "gatehouse: the management key's application 'reader' lacks application:create (to create application 'billing', create application 'auditor'); proxy:create (to create proxy 'payments', create proxy 'status'): nothing was changed\n",
    );
    expect((await tenantState(admin)).proxies).toEqual([]);
    // diff shows the plan and says the apply would be refused.
    const diff = await gatehouse(reader, ['diff', '-f', file]);
    expect(diff.code).toBe(2);
    expect(diff.stderr).toMatch(/^gatehouse: note: apply would be refused: .* lacks application:create/);

    const blind = await createApplication(t, admin.key, { name: 'blind', type: 'management', permissions: ['application:read'] });
    const unreadable = await gatehouse(blind, ['diff', '-f', file]);
    expect(unreadable.code).toBe(1);
    expect(unreadable.stderr).toBe(
      'gatehouse: reading the proxies: 403 Forbidden: The application lacks the proxy:read permission (the management key may not do this: give its application the permission, or use another key)\n',
    );
    const refused = await gatehouse({ key: `key_${'x'.repeat(40)}` }, ['export']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^gatehouse: identifying the management key: 401 .*\(the management key was refused/);
  });
});
