import type { INestApplicationContext } from '@nestjs/common';
import type { AppConfig } from '@gatehouse/config';
import type { Database } from '@gatehouse/persistence';

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
