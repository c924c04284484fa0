import { open, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { CliUsageError, CommandResult } from '../command';
import { executePlan, missingPermissions, renderPlan } from './apply';
import { ConfigFileError, loadConfigFile } from './config-file';
import { exportTenant } from './export';
import { TenantState } from './model';
import { computePlan, Plan } from './plan';
import { connect, readTenant, TenantApi } from './tenant-api';

// What `gatehouse apply`, `diff` and `export` do (config.commands.ts declares them): loaded only when one runs, so
// the CLI's other commands and its help do without the client, YAML and the validation classes.

/** Like `terraform plan -detailed-exitcode`: 0 nothing to change, 2 changes pending, 1 an error (wrong arguments too). */
const CHANGES_PENDING = 2;
const FAILED = 1;

export async function exportConfiguration(values: Record<string, unknown>): Promise<CommandResult> {
  const api = connect(values, process.env);
  const state = await readTenant(api, { applications: 'required', proxies: true });
  const output = values.output as string | undefined;
  const result = await exportTenant(state, {
    output,
    codeDir: values['code-dir'] as string | undefined,
    inlineConfiguration: values['inline-configuration'] === true,
    heading: [
      `Gatehouse configuration of tenant ${state.tenantId ?? '(unknown)'}, written by gatehouse export; apply it with gatehouse apply -f FILE.`,
      `Never exported: keys, expiring applications, and the application of the key that exported it${state.self ? ` ('${state.self.name}')` : ''}.`,
      'Names must stay unique: apply matches applications and proxies by name (docs/operations/configuration-as-code.md).',
    ].join('\n'),
  });
  const notes: string[] = [];
  if (result.variables.length > 0) {
    notes.push(
      `gatehouse: configuration values are not in the export: set these variables before apply (or export with --inline-configuration):`,
      ...result.variables.map((v) => `  ${v.name}  (proxy '${v.proxy}', ${v.key})`),
    );
  }
  if (output) {
    await writeFile(output, result.yaml, 'utf8');
    notes.push(`gatehouse: wrote ${output}${result.codeFiles.length > 0 ? ` and ${result.codeFiles.length} transform file(s)` : ''}`);
  }
  return { stdout: output ? '' : result.yaml, stderr: notes.map((line) => `${line}\n`).join(''), code: 0 };
}

export async function planAndApply(values: Record<string, unknown>, changing: boolean): Promise<CommandResult> {
  const file = values.file as string | undefined;
  if (!file) throw new CliUsageError('needs -f FILE, the configuration to apply (gatehouse export writes one)');
  const api = connect(values, process.env);
  let spec;
  try {
    spec = await loadConfigFile(file, process.env);
  } catch (error) {
    if (!(error instanceof ConfigFileError)) throw error;
    const lines =
      error.problems.length === 1
        ? [`gatehouse: ${file}: ${error.problems[0]}`]
        : [`gatehouse: ${file}: ${error.problems.length} problems:`, ...error.problems.map((p) => `  ${p}`)];
    return { stdout: '', stderr: `${lines.join('\n')}\nnothing was changed\n`, code: FAILED };
  }
  const state = await readTenant(api, {
    applications: spec.applications ? 'required' : 'optional',
    proxies: spec.proxies !== undefined,
  });
  const plan = computePlan(spec, state, { prune: values.prune === true });
  if (plan.problems.length > 0) {
    return {
      stdout: '',
      stderr: `${[`gatehouse: ${file} cannot be applied to this tenant:`, ...plan.problems.map((p) => `  ${p}`)].join('\n')}\nnothing was changed\n`,
      code: FAILED,
    };
  }
  const shown = renderPlan(plan, heading(file, api, state));
  const missing = missingPermissions(plan, state);
  const lacking = missing.length > 0 ? `the management key's application '${state.self!.name}' lacks ${missing.join('; ')}` : undefined;
  if (!changing) {
    return {
      stdout: shown,
      stderr: lacking ? `gatehouse: note: apply would be refused: ${lacking}\n` : '',
      code: plan.changes.length > 0 ? CHANGES_PENDING : 0,
    };
  }
  if (plan.changes.length === 0) return { stdout: shown, stderr: '', code: 0 };
  if (lacking) return { stdout: shown, stderr: `gatehouse: ${lacking}: nothing was changed\n`, code: FAILED };
  return applyPlan(api, plan, state, shown, values['keys-out'] as string | undefined);
}

async function applyPlan(api: TenantApi, plan: Plan, state: TenantState, shown: string, keysOut: string | undefined): Promise<CommandResult> {
  // Opened before any change, and never over an existing file: it may hold the keys of an earlier apply.
  const creates = plan.changes.some((change) => change.action === 'create' && change.kind === 'application');
  let keysFile;
  if (keysOut && creates) {
    try {
      keysFile = await open(keysOut, 'wx', 0o600);
    } catch (error) {
      const reason =
        (error as NodeJS.ErrnoException).code === 'EEXIST'
          ? 'exists (it may hold the keys of an earlier apply: move it away, or name another file)'
          : (error as Error).message;
      return { stdout: shown, stderr: `gatehouse: --keys-out ${keysOut}: ${reason}; nothing was changed\n`, code: FAILED };
    }
  }
  const outcome = await executePlan(api, plan, state);
  const out = [shown, ...outcome.lines.map((line) => `${line}\n`)];
  if (keysFile) {
    // Written whatever happened after: a key made before a failure is shown nowhere else.
    await keysFile.writeFile(`${JSON.stringify({ applications: outcome.keys }, null, 2)}\n`, 'utf8');
    await keysFile.close();
    out.push(`The keys of ${outcome.keys.length} new application(s) are in ${keysOut} (mode 0600); they are shown nowhere else.\n`);
  } else if (outcome.keys.length > 0) {
    out.push(
      'New application keys, shown once (the service keeps only their hashes; store them now):\n',
      ...outcome.keys.map((k) => `  ${k.name}: ${k.key}\n`),
    );
  }
  return { stdout: out.join(''), stderr: outcome.error ? `gatehouse: ${outcome.error.message}\n` : '', code: outcome.error ? FAILED : 0 };
}

function heading(file: string, api: TenantApi, state: TenantState): string {
  const tenant = state.tenantId ? `tenant ${state.tenantId}` : 'the tenant of the key';
  const key = state.self ? ` (key of application '${state.self.name}')` : '';
  return `${basename(file)} against ${api.url}, ${tenant}${key}:`;
}
