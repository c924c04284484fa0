import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './private-redis';
import { openDatabase, runMigrations } from '@gatehouse/persistence';

/**
 * A PostgreSQL cluster of the test's own (initdb + pg_ctl from /usr/lib/postgresql/<newest>/bin, trust auth, a free
 * port, a temporary directory), so that a test can stop, crash or pause it without touching the machine's PostgreSQL
 * that other tests use. As root (CI) the server runs as the `postgres` user, which initdb requires.
 */
export interface PrivatePostgres {
  port: number;
  url: string;
  start: () => void;
  running: () => boolean;
  /** `pg_ctl stop -m fast`: sessions are told (57P01) and closed. */
  stopFast: () => void;
  /** `pg_ctl stop -m immediate`: a crash, connections cut mid-query. */
  stopImmediate: () => void;
  /** SIGSTOP/SIGCONT to the postmaster: a server that accepts connections and never answers. */
  pause: () => void;
  resume: () => void;
  remove: () => void;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl'))) : [];
  if (versions.length === 0) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql/*/bin');
  return join(root, versions.sort((a, b) => Number(b) - Number(a))[0]!, 'bin');
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-pg-'));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  const run = (command: string, args: string[]) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, command), ...args]] : [join(bin, command), args];
    const result = spawnSync(file, argv, { encoding: 'utf8', timeout: 60_000 });
    if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr || result.stdout}`);
    return result.stdout;
  };
  const data = join(dir, 'data');
  const port = await freePort();
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  const pid = () =>
    Number(
      execFileSync('head', ['-1', join(data, 'postmaster.pid')])
        .toString()
        .trim(),
    );
  const start = () => void run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']);
  start();
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    running: () => existsSync(join(data, 'postmaster.pid')),
    stopFast: () => void run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
    stopImmediate: () => void run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']),
    pause: () => process.kill(pid(), 'SIGSTOP'),
    resume: () => {
      if (existsSync(join(data, 'postmaster.pid'))) process.kill(pid(), 'SIGCONT');
    },
    remove: () => {
      spawnSync(
        asRoot ? 'runuser' : join(bin, 'pg_ctl'),
        asRoot ? ['-u', 'postgres', '--', join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop'] : ['-D', data, '-m', 'immediate', 'stop'],
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A private cluster with the schema migrated (as the service would migrate it), its connection closed again. */
export async function startMigratedPrivatePostgres(): Promise<PrivatePostgres> {
  const pg = await startPrivatePostgres();
  // Two connections: runMigrations holds one for its advisory lock.
  const migrating = await openDatabase({ url: pg.url, dataDir: '', poolSize: 2 });
  await runMigrations(migrating);
  await migrating.close();
  return pg;
}
