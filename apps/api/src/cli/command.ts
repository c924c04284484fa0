import type { INestApplicationContext } from '@nestjs/common';
import type { AppConfig } from '@gatehouse/config';
import type { Database } from '@gatehouse/persistence';
import { UUID_PATTERN } from '@gatehouse/domain';

/**
 * One `gatehouse` command. Each lives in a file of its own (or with its siblings, like the `tenant` ones) and is
 * listed once in `commands.ts`; the runner parses its options with util.parseArgs, prints its help, and turns what it
 * throws into one line and an exit code.
 */
export interface CliCommand {
  /** The words that name it: `migrate`, `tenant create`, `logs verify`. */
  name: string;
  /** Arguments as the help shows them: `--name NAME [--json]`. */
  synopsis: string;
  summary: string;
  /** util.parseArgs options; `--help` is added to every command. */
  options?: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;
  /** Names of its positional arguments, all required (`TENANT`). */
  positionals?: string[];
  /** The exit code of wrong arguments, 2 unless a command gives 2 another meaning (`diff`: changes pending). */
  usageExitCode?: number;
  /**
   * Returns what it prints on stdout (exit code 0), or that with another exit code (a check that found a problem)
   * and what it prints on stderr (several lines, which a thrown error's one line cannot say).
   * Opens the database only when it calls `context()` (migrated, with the service's providers) or `database()` (as
   * it is: nothing migrated, no providers; `migrate status`).
   */
  run(args: CommandArgs, context: () => Promise<CommandContext>, database: () => Promise<Database>): Promise<string | CommandResult>;
}

export interface CommandResult {
  stdout: string;
  stderr?: string;
  code: number;
}

export interface CommandArgs {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/**
 * What a command runs against: the service's providers (use cases, repositories) over a migrated database. In the
 * CLI process it is opened for the command; while a service owns the embedded database, the command runs inside that
 * service (see control-socket.ts) with the service's own context.
 */
export interface CommandContext {
  app: INestApplicationContext;
  database: Database;
  config: AppConfig;
  /** Migrations this command's opening of the database applied (none when it runs inside the service). */
  migrationsApplied: string[];
}

/** Wrong arguments: one line and exit code 2. */
export class CliUsageError extends Error {}

/** Wrong arguments to `command`: the problem, then its usage line. */
export function usageError(command: CliCommand, problem: string): CliUsageError {
  return new CliUsageError(`${command.name}: ${problem} (usage: gatehouse ${command.name} ${command.synopsis})`);
}

/** The `--json` option most commands take. */
export const JSON_OPTION = { json: { type: 'boolean' } } as const;

/** A command's result as `--json` prints it. */
export function printJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** A tenant's id from `--tenant ID`, lower-cased; anything but a UUID is a usage error of `command`. */
export function tenantIdOption(command: CliCommand, values: CommandArgs['values']): string {
  const tenantId = values.tenant;
  if (typeof tenantId !== 'string' || !UUID_PATTERN.test(tenantId)) throw usageError(command, '--tenant must be a tenant id (a UUID)');
  return tenantId.toLowerCase();
}

/** A whole number from 1 to 999,999,999 written plainly (no sign, exponent or leading zero), or undefined. */
export function positiveInteger(value: unknown): number | undefined {
  return typeof value === 'string' && /^[1-9]\d{0,8}$/.test(value) ? Number(value) : undefined;
}
