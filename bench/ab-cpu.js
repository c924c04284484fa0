'use strict';
// A/B of the server's CPU per request between this checkout's dist/ and another built checkout's, for a shared,
// loaded machine: both processes are loaded AT THE SAME TIME (5 connections each), so whatever else the machine runs
// weighs on both alike, over interleaved rounds; the figure is the paired per-round difference (b - a) of server CPU
// µs/req (from /proc). Sequential runs, one build after the other, were far noisier there: rounds of unchanged code
// differed by -6 to +14 µs/req (34 in a first round), where an A/A check of this kept single rounds within +-6 and
// paired medians within +-1.
//
//   node --no-node-snapshot bench/ab-cpu.js <root of the other checkout>
//
// The other checkout needs its own dist/ (workspace packages resolve to the dist/ beside them), e.g. for main:
//   mkdir /tmp/base && git archive main | tar -x -C /tmp/base
//   cp -al node_modules /tmp/base/ && cp -al apps/console/node_modules /tmp/base/apps/console/
//   (cd /tmp/base && node scripts/build.js)
// Routes (AB_ROUTES, default bare,redis,limited): bare GET /health/live; GET /applications/{id} with Redis configured,
// by a key without a limit (redis) and with one never reached (limited); `proxy`: bench:proxy's POST through a proxy
// without transforms to a local echo upstream. AB_ROUNDS (8) rounds of AB_MS (3000) ms after
// a warm-up round; BENCH_REDIS_URL as bench:auth. Run it with A pointing at the same build as B once (A/A) to see the
// noise of the moment.
const { randomBytes, randomUUID } = require('node:crypto');
const { join, resolve } = require('node:path');
const { load } = require('./load');
const b = require('./service');
const { PAYLOAD } = require('./proxy-transforms');

const DB = 'gatehouse_bench_ab';
const ROUNDS = Number(process.env.AB_ROUNDS ?? 8);
const DURATION_MS = Number(process.env.AB_MS ?? 3000);
const ROUTES = (process.env.AB_ROUTES ?? 'bare,redis,limited').split(',');
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14';

async function main() {
  if (!process.argv[2]) throw new Error('usage: node --no-node-snapshot bench/ab-cpu.js <root of the other built checkout>');
  const a = require(join(resolve(process.argv[2]), 'bench/service'));
  await b.recreateDatabase(DB);
  // One vault key for both checkouts (each would generate its own into its DATA_DIR).
  const env = {
    DATABASE_URL: b.databaseUrl(DB),
    LOG_LEVEL: 'warn',
    REDIS_URL,
    VAULT_KEY: randomBytes(32).toString('hex'),
    PROXY_ALLOW_HTTP: 'true',
    PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
  };
  const upstreamPort = await b.freePort();
  const key = b.createTenant(env).application.key;
  // Every process started is stopped at the end, whatever fails on the way.
  const children = [];
  let upstream = null;
  const builds = {};
  try {
    if (ROUTES.includes('proxy')) children.push((upstream = await b.startScript(b.ECHO_UPSTREAM_SOURCE, { PORT: String(upstreamPort) })));
    for (const [name, service] of [
      ['a', a],
      ['b', b],
    ]) {
      builds[name] = await service.startGatehouse({ ...env, QUEUE_PREFIX: `bench-${randomUUID()}` });
      children.push(builds[name].child);
    }
    const res = await fetch(`${builds.b.base}/applications`, {
      method: 'POST',
      headers: { 'svc-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ab', type: 'management', permissions: ['application:read'], rate_limit: { limit: 1_000_000, window_seconds: 60 } }),
    });
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${await res.text()}`);
    const target = await res.json();
    const proxy = upstream
      ? await (
          await fetch(`${builds.b.base}/proxies`, {
            method: 'POST',
            headers: { 'svc-api-key': key, 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'ab', destination_url: `http://127.0.0.1:${upstreamPort}/`, require_auth: false }),
          })
        ).json()
      : null;
    const route = (build, name) =>
      name === 'bare'
        ? { url: build.base, path: '/health/live' }
        : name === 'proxy'
          ? {
              url: build.base,
              path: '/proxy/orders',
              method: 'POST',
              headers: { 'content-type': 'application/json', 'svc-proxy-key': proxy.key },
              body: PAYLOAD,
            }
          : { url: build.base, path: `/applications/${target.id}`, headers: { 'svc-api-key': name === 'limited' ? target.key : key } };
    const results = Object.fromEntries(ROUTES.map((name) => [name, { a: [], b: [] }]));
    for (let round = -1; round < ROUNDS; round++) {
      for (const name of ROUTES) {
        const before = { a: b.cpuMs(builds.a.child.pid), b: b.cpuMs(builds.b.child.pid) };
        const [ra, rb] = await Promise.all(['a', 'b'].map((v) => load({ ...route(builds[v], name), connections: 5, durationMs: DURATION_MS, warmupMs: 500 })));
        for (const [v, r] of [
          ['a', ra],
          ['b', rb],
        ]) {
          if (r.errors) throw new Error(`${v} ${name}: ${r.errors} errors`);
          if (round >= 0) results[name][v].push(((b.cpuMs(builds[v].child.pid) - before[v]) * 1000) / (r.requests + r.warmupRequests));
        }
      }
      if (round >= 0) process.stderr.write(`round ${round + 1}/${ROUNDS}\n`);
    }
    console.log(`\nserver CPU µs/req, a = ${resolve(process.argv[2])}, b = this checkout; ${ROUNDS} rounds x ${DURATION_MS / 1000}s, both loaded at once`);
    console.log('| route | a median | b median | b - a, paired median | per round |');
    console.log('|---|---:|---:|---:|---|');
    for (const name of ROUTES) {
      const { a: xs, b: ys } = results[name];
      const diffs = ys.map((y, i) => y - xs[i]);
      console.log(
        `| ${name} | ${median(xs).toFixed(1)} | ${median(ys).toFixed(1)} | ${median(diffs).toFixed(1)} | ${diffs.map((d) => d.toFixed(0)).join(' ')} |`,
      );
    }
  } finally {
    for (const child of children) child.kill('SIGTERM');
  }
}

function median(values) {
  const s = [...values].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
