import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, ServiceProcess, startServiceProcess, WORKER_MAIN } from '@gatehouse/test-support/service-process';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '@gatehouse/test-support/test-env';

jest.setTimeout(90_000);

const DASHBOARD = join(REPO_ROOT, 'deploy/grafana/gatehouse.json');
const RULES = join(REPO_ROOT, 'deploy/prometheus/alerts.yml');
// The series families Gatehouse exports: its own, and prom-client's process and Node.js figures.
const METRIC_NAME = /\b(?:gatehouse|nodejs|process)_[a-z0-9_]+\b/g;

interface Panel {
  title?: string;
  targets?: Array<{ expr?: string }>;
  panels?: Panel[];
}

function dashboardExpressions(): string[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[]; templating: { list: Array<{ definition?: string }> } };
  const walk = (panels: Panel[]): string[] => panels.flatMap((p) => [...(p.targets ?? []).map((t) => t.expr ?? ''), ...walk(p.panels ?? [])]);
  return [...walk(dashboard.panels), ...dashboard.templating.list.map((v) => v.definition ?? '')].filter((e) => e !== '');
}

/** The `expr:` of every rule (one line, or a `|` block indented below it). */
function ruleExpressions(): string[] {
  const lines = readFileSync(RULES, 'utf8').split('\n');
  const exprs: string[] = [];
  lines.forEach((line, i) => {
    const match = /^(\s*)expr:\s*(.*)$/.exec(line);
    if (!match) return;
    if (match[2] !== '|') return void exprs.push(match[2]);
    const block: string[] = [];
    for (let j = i + 1; j < lines.length && (lines[j].trim() === '' || lines[j].search(/\S/) > match[1].length); j++) block.push(lines[j]);
    exprs.push(block.join('\n'));
  });
  return exprs;
}

/** Series names in an exposition: every family's name, and a histogram's or summary's _bucket, _sum, _count. */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const match of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = match;
    names.add(name);
    if (type === 'histogram') ['_bucket', '_sum', '_count'].forEach((suffix) => names.add(name + suffix));
    if (type === 'summary') ['_sum', '_count'].forEach((suffix) => names.add(name + suffix));
  }
  return names;
}

async function scrape(service: ServiceProcess): Promise<string> {
  const match = /"metrics_port":(\d+)/.exec(service.stdout());
  if (!match) throw new Error(`no metrics line in:\n${service.output()}`);
  const res = await fetch(`http://127.0.0.1:${match[1]}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

function sample(text: string, name: string, label = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(label));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('dashboards and alert rules (deploy/grafana, deploy/prometheus)', () => {
  it('promtool accepts the alert rules', () => {
    const out = execFileSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(out).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('every expression names at least one Gatehouse metric', () => {
    const exprs = [...dashboardExpressions(), ...ruleExpressions()];
    expect(exprs.length).toBeGreaterThan(30);
    expect(exprs.filter((e) => (e.match(METRIC_NAME) ?? []).length === 0)).toEqual([]);
  });

  it('every metric the dashboard and the rules name is exported by the api or the worker', async () => {
    const env = { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: `monitoring-${randomBytes(4).toString('hex')}`, METRICS_PORT: '0' };
    // A heartbeat file of its own: the default one in $TMPDIR is shared with every other worker the tests start, and a
    // worker that stops removes it (the gauge then read 0 in a full run).
    const heartbeatDir = mkdtempSync(join(tmpdir(), 'gatehouse-monitoring-'));
    const worker = await startServiceProcess(
      { ...env, WORKER_HEARTBEAT_FILE: join(heartbeatDir, 'heartbeat') },
      [],
      WORKER_MAIN,
      /"msg":"gatehouse worker running"/,
    );
    const api = await startServiceProcess({ ...env, REACTOR_POOL_SIZE: '1' }, ['--api-only']);
    try {
      const apiText = await scrape(api);
      // The worker beats as it starts; the first beat (a query and a PING) may land just after its start line.
      let workerText = await scrape(worker);
      for (let i = 0; i < 100 && !sample(workerText, 'gatehouse_worker_heartbeat_timestamp_seconds'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        workerText = await scrape(worker);
      }
      const exported = new Set([...exportedNames(apiText), ...exportedNames(workerText)]);
      const named = new Set([...dashboardExpressions(), ...ruleExpressions()].flatMap((e) => e.match(METRIC_NAME) ?? []));
      expect([...named].filter((name) => !exported.has(name))).toEqual([]);
      // The figures the dependency and heartbeat alerts read: both answer here, and the worker has beaten.
      for (const text of [apiText, workerText]) {
        expect(sample(text, 'gatehouse_dependency_up', 'dependency="database"')).toBe(1);
        expect(sample(text, 'gatehouse_dependency_up', 'dependency="redis"')).toBe(1);
      }
      const beat = sample(workerText, 'gatehouse_worker_heartbeat_timestamp_seconds');
      expect(beat).toBeGreaterThan(Date.now() / 1000 - 60);
      expect(beat).toBeLessThanOrEqual(Date.now() / 1000 + 1);
    } finally {
      await api.stop();
      expect(await worker.stop()).toBe(0);
      rmSync(heartbeatDir, { recursive: true, force: true });
    }
  });
});
