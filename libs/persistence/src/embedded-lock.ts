import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { preparePrivateDirectory } from '@gatehouse/config';

/**
 * One process at a time owns an embedded database directory: PGlite does not lock its files, and two processes
 * writing them lose data. The owner holds a listening socket named after the directory; a second process cannot bind
 * it, and learns that the directory is taken.
 *
 * On Linux the lock is an abstract socket (no file): the kernel releases it when the owner dies, however it dies, so
 * a crashed owner never leaves a stale lock. Elsewhere it is a socket file in the directory, replaced when nothing
 * answers on it.
 */
export interface DataDirLock {
  /** Where the owner may serve requests from other processes (a socket file in the directory, owner-only). */
  controlSocketPath: string;
  /** What the operator should fix about the directory (see preparePrivateDirectory), for the service's log. */
  warnings: string[];
  release(): Promise<void>;
}

export class DataDirInUseError extends Error {
  /** Checked by code, not class, so the CLI can tell without loading this library (and TypeORM with it). */
  readonly code = 'data_dir_in_use';

  constructor(
    readonly dataDir: string,
    readonly controlSocketPath: string,
    readonly ownerPid: number | undefined,
  ) {
    super(
      `DATA_DIR ${dataDir} is in use by another gatehouse process${ownerPid ? ` (pid ${ownerPid})` : ''}: ` +
        'stop it, or give this process its own DATA_DIR or a DATABASE_URL',
    );
  }
}

const PID_FILE = 'gatehouse.pid';

/**
 * The directory made if needed (owner-only: it holds the database), refused if others may write it, its files made
 * owner-only, and locked; or DataDirInUseError.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const { warnings } = preparePrivateDirectory(dataDir, 'DATA_DIR', { tighten: true });
  const dir = realpathSync(dataDir);
  const lockAddress = lockAddressOf(dir);
  let lock: Server;
  try {
    lock = await listen(lockAddress);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    if (process.platform === 'linux' || (await answers(lockAddress))) throw inUse(dir);
    // A socket file that nothing answers on was left by an owner that died.
    rmSync(lockAddress, { force: true });
    try {
      lock = await listen(lockAddress);
    } catch (retryError) {
      if ((retryError as NodeJS.ErrnoException).code === 'EADDRINUSE') throw inUse(dir);
      throw retryError;
    }
  }
  // Nobody answers on the lock: connections are for the check above only.
  lock.on('connection', (socket) => socket.destroy());
  writeFileSync(join(dir, PID_FILE), `${process.pid}\n`, { mode: 0o600 });
  return {
    controlSocketPath: controlSocketPathOf(dir),
    warnings,
    release: async () => {
      rmSync(join(dir, PID_FILE), { force: true });
      await new Promise<void>((done) => lock.close(() => done()));
    },
  };
}

/** The control socket of the process that owns `dataDir` (see lockDataDir). */
export function controlSocketPathOf(dataDir: string): string {
  const dir = realpathSync(dataDir);
  const inDir = join(dir, 'gatehouse.sock');
  // Socket paths are limited to about 100 bytes; a deep DATA_DIR gets one in the temporary directory instead.
  return Buffer.byteLength(inDir) <= 100 ? inDir : join(tmpdir(), `gatehouse-${digest(dir)}.sock`);
}

function lockAddressOf(dir: string): string {
  return process.platform === 'linux' ? `\0gatehouse-data-dir-${digest(dir)}` : join(dir, 'gatehouse.lock.sock');
}

function digest(dir: string): string {
  return createHash('sha256').update(resolve(dir)).digest('hex').slice(0, 32);
}

function inUse(dir: string): DataDirInUseError {
  let pid: number | undefined;
  try {
    pid = Number(readFileSync(join(dir, PID_FILE), 'utf8').trim()) || undefined;
  } catch {
    pid = undefined;
  }
  return new DataDirInUseError(dir, controlSocketPathOf(dir), pid);
}

function listen(address: string): Promise<Server> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(address, () => {
      server.off('error', fail);
      // The lock must not keep a process alive that is otherwise done.
      server.unref();
      done(server);
    });
  });
}

function answers(address: string): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection(address);
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}
