import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');

/**
 * The image carries dist/ and no sources (Dockerfile): the compiled reactor must find the sandbox runtime's
 * scripts inside dist, where the build copies them. Run from a copy of dist/libs/reactor with nothing else of
 * the checkout beside it (its dependencies only), it still runs a transform in a sandbox process.
 */
describe('the built reactor', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-dist-'));
    cpSync(join(ROOT, 'dist', 'libs', 'reactor'), join(dir, 'dist', 'libs', 'reactor'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('has the runtime scripts beside its compiled code', () => {
    for (const file of ['loader.js', 'intrinsics.js', 'crypto.js']) {
      expect(existsSync(join(ROOT, 'dist', 'libs', 'reactor', 'src', 'runtime', file))).toBe(true);
    }
  });

  it('runs a transform from a copy of dist without libs/reactor/src', () => {
    const script = `
      const { Reactor } = require('./dist/libs/reactor/src/index.js');
      const { runtimeDirectory } = require('./dist/libs/reactor/src/sandbox-runtime.js');
      const reactor = new Reactor({ poolSize: 1 });
      reactor.run({ tenantId: 't', code: 'module.exports = async (req) => ({ body: { n: req.args.n + 1 }, headers: {} });', args: { n: 41 }, configuration: {} })
        .then(async (result) => { process.stdout.write(JSON.stringify({ result, runtime: runtimeDirectory() })); await reactor.close(); });`;
    const run = spawnSync(process.execPath, ['--no-node-snapshot', '-e', script], { cwd: dir, encoding: 'utf8', timeout: 30_000 });
    expect(run.stderr).toBe('');
    expect(existsSync(join(dir, 'libs'))).toBe(false);
    const out = JSON.parse(run.stdout) as { result: { ok: boolean; body: unknown }; runtime: string };
    expect(out.result).toMatchObject({ ok: true, body: { n: 42 } });
    expect(out.runtime).toBe(join(dir, 'dist', 'libs', 'reactor', 'src', 'runtime'));
  });

  it("compiles bundled modules from the build's code cache", () => {
    // The built sandbox processes take the caches the build's producer made (the same Node, the same arguments).
    const script = `
      const { Reactor } = require('./dist/libs/reactor/src/index.js');
      const reactor = new Reactor({ poolSize: 1 });
      reactor.run({ tenantId: 't', code: "module.exports = async () => ({ body: require('uuid').v5('a', require('uuid').v5.URL) });", args: {}, configuration: {} })
        .then(async (result) => { process.stdout.write(JSON.stringify({ result, stats: reactor.stats() })); await reactor.close(); });`;
    const run = spawnSync(process.execPath, ['--no-node-snapshot', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
    const out = JSON.parse(run.stdout) as {
      result: { ok: boolean };
      stats: { modulesCompiled: number; modulesFromCodeCache: number; modulesCodeCacheRejected: number };
    };
    expect(out.result.ok).toBe(true);
    expect(out.stats.modulesCompiled).toBeGreaterThan(0);
    expect(out.stats).toMatchObject({ modulesFromCodeCache: out.stats.modulesCompiled, modulesCodeCacheRejected: 0 });
  });
});
