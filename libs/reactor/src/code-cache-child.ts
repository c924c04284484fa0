import { Invocation } from './invocation';
import { spawnSync } from 'node:child_process';
import { ownExecArgv, writeModuleCodeCaches } from './module-code-cache';
import { sandboxSettings } from './reactor';
import { SandboxIsolate } from './sandbox-isolate';
import { bundledModules, sandboxModulesDirectory } from './sandbox-modules';
import { SANDBOX_EXEC_ARGV } from './sandbox-process';

/**
 * The build's code-cache producer (run by scripts/build-sandbox-modules.js, never by the service): a sandbox isolate
 * like a sandbox process's, in a process started with the sandbox processes' own arguments, that requires each bundled
 * module once, in a fresh context, and then writes its V8 code cache (see module-code-cache.ts). It runs our bundles
 * and nothing else.
 */
async function main(): Promise<void> {
  const directory = sandboxModulesDirectory();
  if (directory === null) throw new Error('dist/sandbox-modules is not built');
  if (JSON.stringify(ownExecArgv()) !== JSON.stringify(SANDBOX_EXEC_ARGV)) {
    // Started otherwise (the build script knows only where this file is): again, with the sandbox processes' arguments.
    const required = process.execArgv.filter((arg, i, all) => arg.startsWith('--require') || all[i - 1] === '--require');
    const again = spawnSync(process.execPath, [...SANDBOX_EXEC_ARGV, ...required, __filename], { stdio: 'inherit' });
    process.exit(again.status ?? 1);
  }
  // A heap large enough to hold every bundle at once (the sandbox processes' is smaller; V8 does not compare heaps).
  const settings = sandboxSettings({}, 512, 60_000, 10 * 1024 * 1024);
  const sandbox = new SandboxIsolate(settings, (message) => {
    throw new Error(`the isolate failed: ${message}`);
  });
  const failed: string[] = [];
  let runs = 0;
  const manifest = await writeModuleCodeCaches(directory, bundledModules(), async (name) => {
    sandbox.prepare();
    const code = `module.exports = async () => { require(${JSON.stringify(name)}); return { body: null }; };`;
    const outcome = await sandbox.execute(
      new Invocation(null, settings),
      null,
      code,
      `code-cache-${runs++}`,
      JSON.stringify({ args: { body: null, headers: {} }, configuration: {} }),
      '',
      settings.timeoutMs,
    );
    // A module whose top level throws here still gets the cache of what compiled.
    if (!outcome.includes('"ok":true')) failed.push(name);
    return sandbox.moduleCodeCache(name);
  });
  sandbox.dispose();
  const total = Object.values(manifest.modules).reduce((sum, m) => sum + m.bytes, 0);
  process.stderr.write(
    `sandbox modules: code caches of ${Object.keys(manifest.modules).length} modules (${(total / 1048576).toFixed(1)} MiB) for V8 ${manifest.v8}` +
      `${failed.length > 0 ? `; these threw at load: ${failed.join(', ')}` : ''}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`sandbox modules: no code caches: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
