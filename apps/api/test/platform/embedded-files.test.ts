import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_MAIN, CLI_BIN, runToCompletion, startServiceProcess } from '@gatehouse/test-support/service-process';

/** Every entry under `dir` (not `dir` itself) whose mode lets group or others in, as `path mode`. */
function openToOthers(dir: string): { count: number; open: string[] } {
  // Node's own recursive listing (it does not follow links), not a walk like the one the service tightens with.
  const paths = (readdirSync(dir, { recursive: true }) as string[]).map((name) => join(dir, name));
  const open: string[] = [];
  for (const path of paths) {
    const stat = lstatSync(path);
    if (!stat.isSymbolicLink() && stat.mode & 0o077) open.push(`${path} ${(stat.mode & 0o777).toString(8)}`);
  }
  return { count: paths.length, open };
}

const modeOf = (path: string) => statSync(path).mode & 0o777;

/** Whether a PostgreSQL server (PGlite's socket server included) answers on 127.0.0.1:port: its reply to an SSLRequest. */
function speaksPostgres(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(5_000, () => socket.destroy());
    socket.once('connect', () => socket.write(Buffer.from([0, 0, 0, 8, 4, 210, 22, 47])));
    socket.once('data', (reply: Buffer) => {
      socket.destroy();
      resolve(reply.length === 1 && (reply[0] === 0x4e || reply[0] === 0x53));
    });
    socket.once('close', () => resolve(false));
    socket.once('error', () => resolve(false));
  });
}

/** The TCP ports process `pid` listens on (Linux: its socket inodes among /proc/net/tcp{,6}'s listening entries). */
function tcpListeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const columns = line.trim().split(/\s+/);
      // State 0A is LISTEN; column 9 the inode.
      if (columns[3] === '0A' && inodes.has(columns[9]!)) ports.add(parseInt(columns[1]!.split(':').pop()!, 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

async function waitForFile(path: string, timeoutMs = 60_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !existsSync(path);) {
    if (Date.now() > deadline) throw new Error(`${path} did not appear`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Embedded mode keeps the database (and the generated checkpoint key) in DATA_DIR: another local user must not read or
 * replace any of it. PGlite creates its files 0666, so this holds only because the processes set an owner-only umask
 * and refuse a DATA_DIR others may write (docs/security.md, "Local files").
 */
describe('the files of embedded mode are the owner’s only', () => {
  let root: string;
  let permissive: number;
  // The test's own umask lets everyone in: whatever comes out owner-only, the service made so.
  beforeAll(() => (permissive = process.umask(0)));
  afterAll(() => process.umask(permissive));
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'gatehouse-files-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('an existing DATA_DIR of mode 0755: every file the CLI and the service write is 0600, every directory 0700, and a warning says the directory is readable', async () => {
    const dataDir = join(root, 'data');
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    // Left by an earlier version (or copied in): made owner-only at start.
    writeFileSync(join(dataDir, 'left-over'), 'x', { mode: 0o644 });

    // The CLI alone opens the database (PGlite creates and migrates it).
    // No VAULT_KEY and no LOG_SIGNING_KEY: keys are generated into DATA_DIR when first needed.
    const env = { DATA_DIR: dataDir, VAULT_KEY: '' };
    const created = await runToCompletion(CLI_BIN, ['tenant', 'create', '--name', 'files', '--json'], env);
    expect(created.code).toBe(0);
    expect(openToOthers(dataDir).open).toEqual([]);

    // The service, with no LOG_SIGNING_KEY: it generates the checkpoint key into DATA_DIR at its first checkpoint.
    const service = await startServiceProcess({ ...env, LOG_CHECKPOINT_INTERVAL_MS: '1000' });
    try {
      const during = await runToCompletion(CLI_BIN, ['tenant', 'create', '--name', 'during'], env);
      expect(during.code).toBe(0);
      await waitForFile(join(dataDir, 'log-signing-key.pem'));
      const { count, open } = openToOthers(dataDir);
      expect(open).toEqual([]);
      // PGlite's cluster: hundreds of files (pg_wal, base/...), all checked.
      expect(count).toBeGreaterThan(100);
      expect(service.stdout()).toContain(`DATA_DIR ${dataDir} is readable by group and others (mode 0755)`);
      // PGlite has no authentication: it is reached through an owner-only Unix socket in DATA_DIR, and the process
      // listens on no TCP port that speaks PostgreSQL (any local user could connect to one, as before).
      const socket = join(dataDir, '.s.PGSQL.5432');
      expect(statSync(socket).isSocket()).toBe(true);
      expect(modeOf(socket) & 0o077).toBe(0);
      const ports = tcpListeningPorts(service.child.pid!);
      expect(ports).toContain(service.port);
      for (const port of ports) expect({ port, speaks: await speaksPostgres(port) }).toEqual({ port, speaks: false });
    } finally {
      expect(await service.stop('SIGTERM')).toBe(0);
    }
    expect(openToOthers(dataDir).open).toEqual([]);
    // The operator's own directory keeps its mode: readable is a warning, not a refusal.
    expect(modeOf(dataDir)).toBe(0o755);
  }, 300_000);

  it('a DATA_DIR that does not exist is made 0700, and so is every directory made above it', async () => {
    const dataDir = join(root, 'a', 'b', 'data');
    const listed = await runToCompletion(CLI_BIN, ['tenant', 'list', '--json'], { DATA_DIR: dataDir });
    expect(listed.code).toBe(0);
    for (const dir of [join(root, 'a'), join(root, 'a', 'b'), dataDir]) expect(modeOf(dir)).toBe(0o700);
    expect(openToOthers(dataDir).open).toEqual([]);
  }, 300_000);

  it.each([
    ['its group', 0o775],
    ['others', 0o757],
    ['group and others', 0o777],
  ])(
    'a DATA_DIR writable by %s is refused by the service and the CLI with one line naming it and the fix; nothing is written',
    async (who, mode) => {
      const dataDir = join(root, 'data');
      mkdirSync(dataDir);
      chmodSync(dataDir, mode);
      const line = new RegExp(
        `^DATA_DIR ${dataDir} is writable by ${who} \\(mode 0${mode.toString(8)}\\): another local user could read or replace the files in it; ` +
          `run \`chmod 700 ${dataDir}\``,
      );

      const service = await runToCompletion(API_MAIN, [], { DATA_DIR: dataDir, PORT: '0' });
      expect(service.code).toBe(1);
      expect(service.stderr.trim().split('\n')).toHaveLength(1);
      expect(service.stderr.replace(/^gatehouse: failed to start: /, '')).toMatch(line);

      const cli = await runToCompletion(CLI_BIN, ['tenant', 'list'], { DATA_DIR: dataDir });
      expect(cli.code).toBe(1);
      expect(cli.stderr.trim().split('\n')).toHaveLength(1);
      expect(cli.stderr.replace(/^gatehouse: /, '')).toMatch(line);

      expect(readdirSync(dataDir)).toEqual([]);
      expect(modeOf(dataDir)).toBe(mode);
    },
    120_000,
  );
});
