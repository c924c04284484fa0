import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { documentedVariables, renderConfigTable, renderEnvExample, TABLE_END, TABLE_START, withConfigTable } from './config-docs';
import { Variable, VARIABLES } from './schema';
import { integer } from './variable-kinds';

const ROOT = join(__dirname, '../../..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The first line where `actual` and `wanted` part, for a failure that says what drifted. */
function firstDifference(actual: string, wanted: string): string {
  const a = actual.split('\n');
  const w = wanted.split('\n');
  const at = a.findIndex((line, i) => line !== w[i]);
  const line = at < 0 ? a.length : at;
  return `line ${line + 1}: has ${JSON.stringify(a[line] ?? '(end)')}, the schema gives ${JSON.stringify(w[line] ?? '(end)')}`;
}

function expectInSync(file: string, wanted: string): void {
  const actual = read(file);
  if (actual !== wanted) throw new Error(`${file} differs from libs/config/src/schema.ts: run \`npm run config:docs\` (${firstDifference(actual, wanted)})`);
}

describe('the documents generated from the configuration schema', () => {
  it('.env.example is what the schema gives', () => {
    expectInSync('.env.example', renderEnvExample());
  });

  it("the README's configuration table is what the schema gives", () => {
    expectInSync('README.md', withConfigTable(read('README.md')));
  });

  it('`npm run config:docs -- --check` agrees, without writing', () => {
    const run = spawnSync(process.execPath, [join(ROOT, 'scripts/generate-config-docs.js'), '--check'], { cwd: ROOT, encoding: 'utf8' });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    expect(run.stdout).toBe('.env.example: up to date\nREADME.md: up to date\n');
  });

  it('would see a variable added to, changed in or dropped from the schema', () => {
    const readme = read('README.md');
    const added: Variable = { name: 'NEW_SETTING', group: 'listeners', readBy: 'api', kind: integer(1, 9, 5), meaning: 'a new setting' };
    expect(withConfigTable(readme, [...VARIABLES, added])).toContain('| `NEW_SETTING` | `5` | api | a new setting |');
    expect(renderEnvExample([...VARIABLES, added])).toContain('# [api] A new setting.\nNEW_SETTING=5\n');
    const changed = VARIABLES.map((v) => (v.name === 'PORT' ? { ...v, kind: integer(0, 65535, 8080) } : v));
    expect(renderEnvExample(changed)).not.toBe(read('.env.example'));
    expect(withConfigTable(readme, VARIABLES.slice(1))).not.toBe(readme);
  });
});

describe('what the generated documents say', () => {
  const rows = documentedVariables();
  const env = renderEnvExample();

  it('names every variable once, with a meaning of one line', () => {
    const names = rows.map((row) => row.name);
    expect(new Set(names).size).toBe(names.length);
    for (const row of rows) {
      expect(row.name).toMatch(/^[A-Z][A-Z0-9_]+$/);
      expect(row.meaning).toMatch(/^\S.*\S$/);
      expect(row.meaning).not.toContain('\n');
    }
    // A `_FILE` row for each variable that may be read from a file.
    expect(names).toEqual(expect.arrayContaining(['DATABASE_URL_FILE', 'REDIS_URL_FILE', 'BOOTSTRAP_MANAGEMENT_KEY_FILE']));
  });

  it('sets each constant default, and leaves every secret empty and commented out', () => {
    expect(env).toMatch(/^PORT=3000$/m);
    expect(env).toMatch(/^LOG_LEVEL=info$/m);
    expect(env).toMatch(/^TRUSTED_PROXIES=$/m);
    expect(env).toMatch(/^# REACTOR_POOL_SIZE=2$/m);
    for (const variable of VARIABLES.filter((v) => v.secret)) expect(env).toMatch(new RegExp(`^# ${variable.name}=$`, 'm'));
  });

  it('keeps every .env.example line within 120 characters, and the table between its markers', () => {
    for (const line of env.split('\n')) expect(line.length).toBeLessThanOrEqual(120);
    const table = renderConfigTable();
    expect(table.startsWith(TABLE_START)).toBe(true);
    expect(table.endsWith(TABLE_END)).toBe(true);
    expect(() => withConfigTable('# no markers\n')).toThrow(/no <!-- config:start -->/);
  });
});
