import { CliCommand } from '../command';

// Configuration as code (docs/operations/configuration-as-code.md): a tenant's applications and proxies declared in
// a YAML file and applied through the public API, as decK does for Kong. These commands never open the database:
// they run wherever the API is reachable, with a management key of the tenant. What they do is in config-run.ts,
// loaded only when one of them runs.

/** Wrong arguments exit 1 here: 2 means "changes pending" to diff (and to apply --dry-run). */
const USAGE_EXIT_CODE = 1;

/** The service and the management key; tenant-api.ts reads them (and their environment variables). */
const CONNECTION_OPTIONS = { url: { type: 'string' }, 'api-key': { type: 'string' }, 'api-key-file': { type: 'string' } } as const;
const CONNECTION_SYNOPSIS = '[--url URL] [--api-key KEY | --api-key-file FILE]';

const FILE_OPTIONS = { file: { type: 'string', short: 'f' }, prune: { type: 'boolean' } } as const;

const apply: CliCommand = {
  name: 'apply',
  synopsis: `-f FILE [--prune] [--dry-run] [--keys-out FILE] ${CONNECTION_SYNOPSIS}`,
  summary:
    'makes the tenant of the management key what FILE declares, through the API (plan first; --prune deletes what FILE leaves out; new keys shown once, or --keys-out FILE)',
  options: { ...FILE_OPTIONS, 'dry-run': { type: 'boolean' }, 'keys-out': { type: 'string' }, ...CONNECTION_OPTIONS },
  usageExitCode: USAGE_EXIT_CODE,
  run: async ({ values }) => (await import('./config-run')).planAndApply(values, !values['dry-run']),
};

const diff: CliCommand = {
  name: 'diff',
  synopsis: `-f FILE [--prune] ${CONNECTION_SYNOPSIS}`,
  summary: 'shows what apply would change, changing nothing (exit 0: nothing, 2: changes pending, 1: error)',
  options: { ...FILE_OPTIONS, ...CONNECTION_OPTIONS },
  usageExitCode: USAGE_EXIT_CODE,
  run: async ({ values }) => (await import('./config-run')).planAndApply(values, false),
};

const exportCommand: CliCommand = {
  name: 'export',
  synopsis: `[-o FILE] [--code-dir DIR] [--inline-configuration] ${CONNECTION_SYNOPSIS}`,
  summary:
    "writes the tenant's applications and proxies as a file that apply takes unchanged (never keys; configuration values as ${env:NAME} unless --inline-configuration)",
  options: { output: { type: 'string', short: 'o' }, 'code-dir': { type: 'string' }, 'inline-configuration': { type: 'boolean' }, ...CONNECTION_OPTIONS },
  usageExitCode: USAGE_EXIT_CODE,
  run: async ({ values }) => (await import('./config-run')).exportConfiguration(values),
};

export const CONFIG_COMMANDS: CliCommand[] = [apply, diff, exportCommand];
