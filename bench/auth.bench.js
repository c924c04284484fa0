'use strict';
// npm run bench:auth — the cost of authentication: an authenticated GET /applications/{id} beside the bare
// /health/live of the same process, over real PostgreSQL on loopback, measured in one run.
const { load, progress, summarize } = require('./load');
const { createTenant, databaseUrl, fmt, recreateDatabase, startGatehouse } = require('./service');

const DB = 'gatehouse_bench_auth';
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 10_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

async function main() {
  await recreateDatabase(DB);
  const env = { DATABASE_URL: databaseUrl(DB), LOG_LEVEL: 'warn', REDIS_URL: '' };
  const key = createTenant(env).application.key;
  const api = await startGatehouse(env);
  const base = api.base;
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

  const bare = summarize(results.bare);
  const auth = summarize(results.auth);
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
