import 'reflect-metadata';
import { OWNER_ONLY_UMASK } from '@gatehouse/config';
import { CommandContext } from './cli/command';
import { runInOwner } from './cli/control-socket';
import { CliResult, ContextOpener, errorLine, execute, isDataDirInUse } from './cli/execute';

/**
 * How long a command waits for an embedded database held by a process that does not take commands yet (a service
 * starting, or another command): opening PGlite and migrating took over 30 s on a loaded machine.
 */
const WAIT_FOR_DATA_DIR_MS = 120_000;

/** The `gatehouse` command line (bin/gatehouse.js runs this file from dist). */
async function main(argv: string[]): Promise<CliResult> {
  // A command may open the embedded database itself: whatever it writes in DATA_DIR is the owner's only.
  process.umask(OWNER_ONLY_UMASK);
  const deadline = Date.now() + WAIT_FOR_DATA_DIR_MS;
  for (;;) {
    try {
      return await execute(argv, standaloneOpener());
    } catch (error) {
      if (!isDataDirInUse(error)) throw error;
      try {
        // `npm start` owns the embedded database: the command runs in it (see cli/control-socket.ts).
        return await runInOwner(error.controlSocketPath, argv);
      } catch (connectError) {
        // Nobody answers: the owner is a service still starting, or another command that will be done shortly.
        if (!notListening(connectError) || Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }
}

function notListening(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ECONNREFUSED';
}

/** This process opens the database itself, on the first command that asks for it. */
function standaloneOpener(): ContextOpener {
  let close: (() => Promise<void>) | undefined;
  return {
    async open(): Promise<CommandContext> {
      const opened = await (await import('./cli/open-database')).openCommandContext();
      close = opened.close;
      return opened.context;
    },
    async openDatabase() {
      const opened = await (await import('./cli/open-database')).openBareDatabase();
      close = opened.close;
      return opened.database;
    },
    async close(): Promise<void> {
      await close?.();
    },
  };
}

/** Exits once both streams took everything: a pipe that is slow to read must not cut a long output (openapi). */
function finish({ code, stdout, stderr }: CliResult): void {
  process.stdout.write(stdout, () => process.stderr.write(stderr, () => process.exit(code)));
}

main(process.argv.slice(2)).then(finish, (error: unknown) => finish({ code: 1, stdout: '', stderr: `gatehouse: ${errorLine(error)}\n` }));
