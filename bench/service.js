'use strict';
// What every benchmark needs around the service: a database of its own, a tenant, and Gatehouse from dist/.
const { spawn, execFileSync } = require('node:child_process');
const { createServer } = require('node:net');
const { join } = require('node:path');
const { existsSync, openSync, readdirSync, readFileSync } = require('node:fs');
const { Client } = require('pg');

const ROOT = join(__dirname, '..');
const ADMIN_URL = process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function databaseUrl(name) {
  return ADMIN_URL.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);
}

async function recreateDatabase(name) {
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
}

/** A tenant and its management application through the CLI, as an operator creates one. */
function createTenant(env, name = 'bench') {
  const out = execFileSync(process.execPath, ['--no-node-snapshot', join(ROOT, 'dist/apps/api/src/cli.js'), 'tenant', 'create', '--name', name, '--json'], {
    cwd: ROOT,
    env: { ...process.env, ...env, LOG_LEVEL: 'silent' },
  });
  return JSON.parse(out.toString());
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** `npm run start:api` from dist/ on a free port; resolves once /health/live answers. */
async function startGatehouse(env) {
  const port = await freePort();
  // BENCH_PROFILE_DIR=<dir>: the service writes a V8 CPU profile there when it stops (open it in Chrome DevTools).
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  // BENCH_PROBE_FILE=<file>: bench/server-probe.js in the service (loop delay, collections, allocation; see probe()).
  if (process.env.BENCH_PROBE_FILE) profile.push('--require', join(__dirname, 'server-probe.js'));
  // BENCH_NODE_FLAGS="--single-threaded-gc ...": Node or V8 flags for the service (a runtime setting to try).
  if (process.env.BENCH_NODE_FLAGS) profile.push(...process.env.BENCH_NODE_FLAGS.split(/\s+/).filter(Boolean));
  const child = spawn(process.execPath, ['--no-node-snapshot', ...profile, join(ROOT, 'dist/apps/api/src/main.js'), '--api-only'], {
    cwd: ROOT,
    // No console listener: it would take port 3001 in every service a benchmark starts.
    env: { CONSOLE_PORT: 'off', ...process.env, ...env, PORT: String(port) },
    // BENCH_SERVICE_STDOUT=<file>: the service's stdout (its log lines, V8's --trace-* output) into that file.
    stdio: ['ignore', process.env.BENCH_SERVICE_STDOUT ? openSync(process.env.BENCH_SERVICE_STDOUT, 'w') : 'ignore', 'inherit'],
  });
  let exited = false;
  child.once('exit', () => (exited = true));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600 && !exited; i++) {
    try {
      if ((await fetch(`${base}/health/live`)).ok) return { child, base, port };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error('gatehouse did not start');
}

/** CPU time (user + system) a process and its children have used so far, in ms; Linux /proc, undefined elsewhere. */
function cpuMs(pid) {
  const own = processCpuMs(pid);
  if (own === undefined) return undefined;
  // Its children too: Gatehouse runs transforms in sandbox processes of its own.
  return childrenOf(pid).reduce((total, child) => total + (processCpuMs(child) ?? 0), own);
}

/** The fields of /proc/<pid>/stat after the command's name (state, ppid, ...; utime is [11]); throws once it is gone. */
function procStat(pid) {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
}

/** Clock ticks (USER_HZ 100) in ms. */
const ticksMs = (ticks) => (ticks * 1000) / 100;

/** CPU time (user + system) of the process alone, without its children, in ms; undefined once it is gone. */
function processCpuMs(pid) {
  try {
    const fields = procStat(pid);
    return ticksMs(Number(fields[11]) + Number(fields[12])); // utime, stime
  } catch {
    return undefined;
  }
}

/**
 * CPU time (user + system) of the local PostgreSQL server, in ms: every `postgres` process, and what its exited
 * backends used (the postmaster's children's time). Undefined when no PostgreSQL runs on this machine.
 */
function databaseCpuMs() {
  let total;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
      const fields = procStat(entry);
      const parent = readFileSync(`/proc/${fields[1]}/comm`, 'utf8').trim();
      // utime, stime; for the postmaster also cutime, cstime (its exited children).
      const ticks = Number(fields[11]) + Number(fields[12]) + (parent === 'postgres' ? 0 : Number(fields[13]) + Number(fields[14]));
      total = (total ?? 0) + ticksMs(ticks);
    } catch {
      // Gone in between.
    }
  }
  return total;
}

/** The pids of a process's children (its sandbox processes, for Gatehouse). */
function childrenOf(pid) {
  const children = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1]) === pid) children.push(Number(entry));
    } catch {
      // Gone in between.
    }
  }
  return children;
}

// An upstream that echoes the request body as JSON. Runs in its own process, like a real destination.
const ECHO_UPSTREAM_SOURCE = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = chunks.length ? Buffer.concat(chunks) : Buffer.from('{"ok":true}');
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 65000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send('ready'));
`;

/** A child node process running `source`, ready once it says so. */
function startScript(source, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', source], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`helper exited with ${code}`)));
  });
}

/**
 * Starts a window of bench/server-probe.js in the service `pid` (started with BENCH_PROBE_FILE set); the function
 * returned ends it and resolves to what the probe measured: see server-probe.js.
 */
function probe(pid) {
  process.kill(pid, 'SIGUSR2');
  return async () => {
    const file = process.env.BENCH_PROBE_FILE;
    const lines = () => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).length : 0);
    const before = lines();
    process.kill(pid, 'SIGUSR2');
    for (let i = 0; i < 100 && lines() === before; i++) await new Promise((r) => setTimeout(r, 20));
    return JSON.parse(readFileSync(file, 'utf8').trim().split('\n').pop());
  };
}

const fmt = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

module.exports = {
  ROOT,
  ADMIN_URL,
  databaseUrl,
  recreateDatabase,
  createTenant,
  freePort,
  startGatehouse,
  fmt,
  cpuMs,
  processCpuMs,
  childrenOf,
  databaseCpuMs,
  ECHO_UPSTREAM_SOURCE,
  startScript,
  probe,
};
