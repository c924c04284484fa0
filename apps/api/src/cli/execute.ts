import { parseArgs } from 'node:util';
import { ConfigError, gatehouseVersion } from '@gatehouse/config';
import { DomainError } from '@gatehouse/domain';
import type { Database } from '@gatehouse/persistence';
import { CliCommand, CliUsageError, CommandContext } from './command';
import { COMMANDS } from './commands';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Opens what commands run against; called at most once per command, and only by commands that need it. */
export interface ContextOpener {
  open(): Promise<CommandContext>;
  /** The database as it is, not migrated (a service that owns it already did): the context's when absent. */
  openDatabase?(): Promise<Database>;
  close(): Promise<void>;
}

const PROGRAM = 'gatehouse';

export function usage(commands: CliCommand[] = COMMANDS): string {
  const rows = commands.map((c) => [`${c.name} ${c.synopsis}`.trim(), c.summary]);
  const width = Math.max(...rows.map(([left]) => left!.length));
  return [
    `usage: ${PROGRAM} <command> [options]    (${PROGRAM} <command> --help for one command; ${PROGRAM} --version)`,
    '',
    'commands:',
    ...rows.map(([left, right]) => `  ${left!.padEnd(width)}   ${right}`),
    '',
    'The database is DATABASE_URL, or else the embedded one in DATA_DIR (./.data). While a service runs on the',
    'embedded database, commands are carried out by that service. Exit codes: 0 done, 1 failed, 2 wrong arguments.',
    '',
  ].join('\n');
}

/**
 * Parses `argv` and runs the command it names, returning what to print and the exit code: nothing is thrown, except
 * DataDirInUseError, which tells the CLI process to hand the command to the service that owns the embedded database.
 */
export async function execute(argv: string[], opener: ContextOpener, commands: CliCommand[] = COMMANDS): Promise<CliResult> {
  if (argv.length === 0) return { code: 2, stdout: '', stderr: usage(commands) };
  if (argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') return { code: 0, stdout: usage(commands), stderr: '' };
  if (argv[0] === '--version' || argv[0] === '-V') return { code: 0, stdout: `${PROGRAM} ${gatehouseVersion()}\n`, stderr: '' };
  const command = commands.find((c) => startsWith(argv, c.name.split(' ')));
  if (!command) {
    const group = commands.filter((c) => c.name.split(' ')[0] === argv[0]);
    if (group.length > 0 && (argv.length === 1 || argv[1] === '--help' || argv[1] === '-h')) {
      return { code: argv.length === 1 ? 2 : 0, stdout: argv.length === 1 ? '' : usage(group), stderr: argv.length === 1 ? usage(group) : '' };
    }
    return failure(2, `unknown command '${argv.slice(0, group.length > 0 ? 2 : 1).join(' ')}' (${PROGRAM} --help lists them)`);
  }
  const rest = argv.slice(command.name.split(' ').length);
  let args: { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] };
  try {
    args = parseArgs({ args: rest, options: { ...command.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (error) {
    return failure(command.usageExitCode ?? 2, `${command.name}: ${(error as Error).message.split('\n').join(' ')} (${PROGRAM} ${command.name} --help)`);
  }
  if (args.values.help) return { code: 0, stdout: `usage: ${PROGRAM} ${command.name} ${command.synopsis}\n  ${command.summary}\n`, stderr: '' };
  const wanted = command.positionals ?? [];
  if (args.positionals.length !== wanted.length) {
    const problem = args.positionals.length < wanted.length ? `needs ${wanted.join(' ')}` : `takes no argument '${args.positionals[wanted.length]}'`;
    return failure(command.usageExitCode ?? 2, `${command.name} ${problem} (usage: ${PROGRAM} ${command.name} ${command.synopsis})`);
  }
  try {
    const out = await command.run(
      args,
      () => opener.open(),
      async () => (opener.openDatabase ? opener.openDatabase() : (await opener.open()).database),
    );
    return typeof out === 'string' ? { code: 0, stdout: out, stderr: '' } : { stdout: out.stdout, stderr: out.stderr ?? '', code: out.code };
  } catch (error) {
    if (isDataDirInUse(error)) throw error;
    return failure(error instanceof CliUsageError ? (command.usageExitCode ?? 2) : 1, errorLine(error));
  } finally {
    await opener.close();
  }
}

/** The embedded database is owned by a running service (persistence's DataDirInUseError). */
export function isDataDirInUse(error: unknown): error is Error & { controlSocketPath: string } {
  return (error as { code?: unknown })?.code === 'data_dir_in_use';
}

function startsWith(argv: string[], words: string[]): boolean {
  return words.every((word, i) => argv[i] === word);
}

function failure(code: number, line: string): CliResult {
  return { code, stdout: '', stderr: `${PROGRAM}: ${line}\n` };
}

/** One line, whatever failed (a field's problems, an unreachable database), or one a refused configuration value. */
export function errorLine(error: unknown): string {
  if (error instanceof DomainError && error.fieldErrors) {
    return Object.entries(error.fieldErrors)
      .map(([field, problems]) => `${field} ${problems.join(', ')}`)
      .join('; ');
  }
  // Every refused variable on a line of its own (`failure` prefixes the first with the program's name).
  if (error instanceof ConfigError) return error.problems.map((problem) => `configuration error: ${problem}`).join(`\n${PROGRAM}: `);
  // Connecting to a host with several addresses fails with an AggregateError whose own message is empty.
  const cause = error instanceof AggregateError && !error.message && error.errors.length > 0 ? error.errors[0] : error;
  const code = (cause as NodeJS.ErrnoException).code;
  const message = cause instanceof Error ? cause.message : String(cause);
  const line = message.split('\n')[0] ?? '';
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ETIMEDOUT') return `cannot reach the database: ${line}`;
  return line;
}
