import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * Builds dist/sandbox-modules when it is missing or older than package-lock.json (what `npm run build` does), so the
 * unit tier, which runs the sandbox from its sources, has the bundled modules transforms require.
 */
export function ensureSandboxModules(): void {
  const root = join(__dirname, '..', '..', '..', '..');
  execFileSync(process.execPath, [join(root, 'scripts', 'build-sandbox-modules.js'), '--if-stale'], { cwd: root, stdio: 'inherit' });
}
