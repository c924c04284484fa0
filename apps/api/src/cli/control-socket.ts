import { chmodSync, rmSync } from 'node:fs';
import { createConnection, createServer, Server } from 'node:net';
import { CliResult } from './execute';

/**
 * While a service owns the embedded database (DATA_DIR), a `gatehouse` command cannot open it: the CLI hands its
 * arguments to the service over this socket instead, and the service runs the command with its own providers, so a
 * tenant created this way exists in the running service and survives its restart. One JSON line each way:
 * `{"argv": [...]}` in, a CliResult out. The socket file is the owner's only (mode 0600, in an owner-only DATA_DIR):
 * reaching it is as good as reading the database files, and no less.
 */
const MAX_REQUEST_BYTES = 64 * 1024;

export async function serveControlSocket(path: string, run: (argv: string[]) => Promise<CliResult>): Promise<Server> {
  // This process holds the DATA_DIR lock, so a file left here is from an owner that died.
  rmSync(path, { force: true });
  const server = createServer((socket) => {
    let received = '';
    socket.setEncoding('utf8');
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (received.length > MAX_REQUEST_BYTES) return reply({ code: 2, stdout: '', stderr: 'gatehouse: request too large\n' });
      const end = received.indexOf('\n');
      if (end < 0) return;
      socket.removeAllListeners('data');
      const argv = parseRequest(received.slice(0, end));
      if (!argv) return reply({ code: 2, stdout: '', stderr: 'gatehouse: malformed request on the control socket\n' });
      run(argv).then(reply, (error: unknown) =>
        reply({ code: 1, stdout: '', stderr: `gatehouse: ${error instanceof Error ? error.message : String(error)}\n` }),
      );
    });
    function reply(result: CliResult): void {
      socket.end(`${JSON.stringify(result)}\n`);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(path, 0o600);
  return server;
}

function parseRequest(line: string): string[] | undefined {
  try {
    const request = JSON.parse(line) as { argv?: unknown };
    return Array.isArray(request.argv) && request.argv.every((a) => typeof a === 'string') ? request.argv : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs `argv` in the service that owns the database. Fails with ENOENT or ECONNREFUSED when nothing listens: a service
 * still starting (it holds the lock before it listens here), or another command holding the database.
 */
export function runInOwner(path: string, argv: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let received = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${JSON.stringify({ argv })}\n`));
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      try {
        resolve(JSON.parse(received) as CliResult);
      } catch {
        reject(new Error('the service holding DATA_DIR closed the control socket without an answer'));
      }
    });
  });
}
