import 'reflect-metadata';
import { CommandContext } from './cli/command';
import { runInOwner } from './cli/control-socket';
import { CliResult, ContextOpener, errorLine, execute, isDataDirInUse } from './cli/execute';

/** The `gatehouse` command line (bin/gatehouse.js runs this file from dist). */
async function main(argv: string[]): Promise<CliResult> {
  try {
    return await execute(argv, standaloneOpener());
  } catch (error) {
    if (!isDataDirInUse(error)) throw error;
    // `npm start` owns the embedded database: the command runs in it (see cli/control-socket.ts).
    return runInOwner(error.controlSocketPath, argv);
  }
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
    async close(): Promise<void> {
      await close?.();
    },
  };
}

main(process.argv.slice(2)).then(
  (result) => {
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    process.exit(result.code);
  },
  (error: unknown) => {
    process.stderr.write(`gatehouse: ${errorLine(error)}\n`);
    process.exit(1);
  },
);
