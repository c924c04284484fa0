import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { Reactor } from '../src';
import { prepared, runInNode, svcBridgeStub, svcStub, type Outcome } from './support/corpus-node';
import { ensureSandboxModules } from './support/sandbox-modules';

/**
 * The compatibility corpus (test/transform-corpus): transforms written after the platform's public documentation and
 * the allowlisted packages' own examples, each run once in plain Node with the real packages and once in a sandbox; the
 * destination would receive (or the caller get) the same status, headers and body. The svc token methods run against
 * a stub of the API (svcBridgeStub) answering as the Node side's stub does. Fixtures that need outbound HTTP (fetch,
 * http, https) or a refused package are run too, and counted as not running unless they already agree.
 * docs/transforms.md reports the figure this prints.
 */
const DIR = join(__dirname, 'transform-corpus');
interface Fixture {
  needs: string[];
  note?: string;
  prepare?: string;
  args: Record<string, unknown>;
  configuration: Record<string, string>;
  code: string;
}
const fixtures = readdirSync(DIR)
  .filter((f) => f.endsWith('.js'))
  .sort()
  .map((file) => ({ file, fixture: require(join(DIR, file)) as Fixture })); // eslint-disable-line @typescript-eslint/no-require-imports

/** Fixtures whose needs are all met today: they must agree with Node. */
const MET = new Set<string>(['svc']);

describe('Transform corpus: the same results as plain Node', () => {
  let reactor: Reactor;
  const agreed: string[] = [];
  beforeAll(() => {
    ensureSandboxModules();
    reactor = new Reactor({ poolSize: 1, timeoutMs: 10000 });
  });
  afterAll(async () => {
    await reactor.close();
    const others = fixtures.filter((f) => !agreed.includes(f.file)).map((f) => `${f.file} (${f.fixture.needs.join(', ') || 'no needs'})`);
    process.stdout.write(`transform corpus: ${agreed.length} of ${fixtures.length} run unchanged (same result as Node); not: ${others.join(', ')}\n`);
  });

  it('holds at least 30 transforms', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(30);
  });

  it.each(fixtures.map((f) => [f.file, f.fixture] as const))('%s', async (file, fixture) => {
    const { args, configuration } = prepared(fixture.prepare, fixture.args, fixture.configuration);
    const inNode = await runInNode(fixture.code, args, configuration, svcStub);
    const result = await reactor.run({ tenantId: 'tenant-corpus', code: fixture.code, args, configuration, svc: svcBridgeStub });
    const inSandbox: Outcome = { ok: result.ok, headers: result.headers, body: result.body };
    if (result.status !== undefined) inSandbox.status = result.status;
    const same = isDeepStrictEqual(JSON.parse(JSON.stringify(inSandbox)), JSON.parse(JSON.stringify(inNode)));
    if (same) agreed.push(file);
    if (fixture.needs.every((n) => MET.has(n))) expect(inSandbox).toEqual(inNode);
  });

  it('runs every transform whose needs are met (the figure docs/transforms.md gives)', () => {
    expect(agreed.length).toBeGreaterThanOrEqual(fixtures.filter((f) => f.fixture.needs.every((n) => MET.has(n))).length);
  });
});
