'use strict';
// npm run bench:auth — the cost of authentication: an authenticated GET /applications/{id} beside the bare
// /health/live of the same process, over real PostgreSQL on loopback, measured in one run.
const { spawn, execFileSync } = require('node:child_process');
const { join } = require('node:path');
const { Client } = require('pg');
const { load, progress } = require('./load');

const ROOT = join(__dirname, '..');
const ADMIN_URL = process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB = 'gatehouse_bench_auth';
const DB_URL = ADMIN_URL.replace(/\/[^/?]*(\?|$)/, `/${DB}$1`);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 10_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

async function recreateDatabase() {
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${DB}" WITH (FORCE)`);
  await admin.query(`CREATE DATABASE "${DB}"`);
  await admin.end();
}

function startApi(env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--no-node-snapshot', join(ROOT, 'dist/apps/api/src/main.js'), '--api-only'], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', REDIS_URL: '', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /"port":(\d+)[^\n]*"msg":"gatehouse api listening"/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`api exited with ${code}: ${out}`)));
  });
}

function fmt(n, digits = 2) {
  return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}

async function main() {
  await recreateDatabase();
  const env = { DATABASE_URL: DB_URL };
  const created = JSON.parse(
    execFileSync(process.execPath, ['--no-node-snapshot', join(ROOT, 'dist/apps/api/src/cli.js'), 'tenant', 'create', '--name', 'bench', '--json'], {
      cwd: ROOT,
      env: { ...process.env, ...env, LOG_LEVEL: 'silent' },
    }).toString(),
  );
  const key = created.application.key;
  const api = await startApi(env);
  const base = `http://127.0.0.1:${api.port}`;
  const res = await fetch(`${base}/applications`, {
    method: 'POST',
    headers: { 'svc-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench target', type: 'private', permissions: ['token:read'] }),
  });
  const target = await res.json();

  const routes = {
    bare: { path: '/health/live' },
    auth: { path: `/applications/${target.id}`, headers: { 'svc-api-key': key } },
  };
  const results = { bare: [], auth: [] };
  const steps = ROUNDS * 2;
  let step = 0;
  progress('measuring', step, steps);
  // Interleaved rounds, so drift of the machine affects both routes alike.
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of ['bare', 'auth']) {
      results[name].push(await load({ url: base, ...routes[name], connections: CONNECTIONS, durationMs: DURATION_MS }));
      progress('measuring', ++step, steps);
    }
  }
  api.child.kill('SIGTERM');

  const summary = (runs) => ({
    rps: runs.reduce((s, r) => s + r.rps, 0) / runs.length,
    p50: runs.reduce((s, r) => s + r.p50, 0) / runs.length,
    p99: runs.reduce((s, r) => s + r.p99, 0) / runs.length,
    errors: runs.reduce((s, r) => s + r.errors, 0),
  });
  const bare = summary(results.bare);
  const auth = summary(results.auth);
  const ratio = auth.rps / bare.rps;
  const added = auth.p50 - bare.p50;
  console.log(`\nbench:auth  ${ROUNDS} interleaved rounds x ${DURATION_MS / 1000}s, ${CONNECTIONS} connections, loopback, PostgreSQL ${DB}`);
  console.log('| route | req/s | p50 ms | p99 ms | errors |');
  console.log('|---|---:|---:|---:|---:|');
  console.log(`| GET /health/live (reference, no auth) | ${fmt(bare.rps, 0)} | ${fmt(bare.p50, 3)} | ${fmt(bare.p99, 3)} | ${bare.errors} |`);
  console.log(`| GET /applications/{id} (SVC-API-KEY) | ${fmt(auth.rps, 0)} | ${fmt(auth.p50, 3)} | ${fmt(auth.p99, 3)} | ${auth.errors} |`);
  console.log('');
  console.log(`| target | measured | met |`);
  console.log('|---|---:|:-:|');
  console.log(`| authenticated throughput >= 60% of bare | ${fmt(ratio * 100, 1)}% | ${ratio >= 0.6 ? 'yes' : 'NO'} |`);
  console.log(`| authentication adds <= 0.5 ms to p50 | ${fmt(added, 3)} ms | ${added <= 0.5 ? 'yes' : 'NO'} |`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
