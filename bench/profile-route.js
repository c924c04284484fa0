'use strict';
// Profiling aid for bench:auth (not a benchmark): one Gatehouse process under --cpu-prof, one route loaded for a
// while, then the server's CPU time per request and the profile's self time grouped by where it is spent.
//   node --no-node-snapshot bench/profile-route.js bare|auth|redis|limited [seconds]
const { mkdtempSync, readdirSync, readFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { randomUUID } = require('node:crypto');
const { load } = require('./load');
const { cpuMs, createTenant, databaseUrl, recreateDatabase, startGatehouse } = require('./service');

const DB = 'gatehouse_bench_auth_profile';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14';

async function main() {
  const route = process.argv[2] ?? 'limited';
  const seconds = Number(process.argv[3] ?? 8);
  await recreateDatabase(DB);
  const env = {
    DATABASE_URL: databaseUrl(DB),
    LOG_LEVEL: 'warn',
    REDIS_URL: route === 'redis' || route === 'limited' ? REDIS_URL : '',
    QUEUE_PREFIX: `bench-${randomUUID()}`,
  };
  const key = createTenant(env).application.key;
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-profile-'));
  process.env.BENCH_PROFILE_DIR = dir;
  const api = await startGatehouse(env);
  const create = async (body) => {
    const res = await fetch(`${api.base}/applications`, {
      method: 'POST',
      headers: { 'svc-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'management', permissions: ['application:read'], ...body }),
    });
    return res.json();
  };
  const target = await create({ name: 'target' });
  const limited = await create({ name: 'limited', rate_limit: { limit: 1_000_000, window_seconds: 60 } });
  const o =
    route === 'bare'
      ? { url: api.base, path: '/health/live' }
      : { url: api.base, path: `/applications/${target.id}`, headers: { 'svc-api-key': route === 'limited' ? limited.key : key } };
  // Warm up, then measure: only the samples of the measured window are summarised.
  await load({ ...o, connections: 10, durationMs: 1000, warmupMs: 1000 });
  const before = cpuMs(api.child.pid);
  const started = performance.now();
  const r = await load({ ...o, connections: 10, durationMs: seconds * 1000, warmupMs: 0 });
  const measuredMs = performance.now() - started;
  const cpu = cpuMs(api.child.pid) - before;
  const exited = new Promise((resolve) => api.child.once('exit', resolve));
  const killed = performance.now();
  api.child.kill('SIGTERM');
  await exited;
  const stoppingMs = performance.now() - killed;
  console.log(
    `${route}: ${r.rps.toFixed(0)} req/s p50 ${r.p50.toFixed(3)} ms, errors ${r.errors}, server CPU ${((cpu * 1000) / r.requests).toFixed(0)} us/req`,
  );
  const file = join(
    dir,
    readdirSync(dir).find((f) => f.endsWith('.cpuprofile')),
  );
  summarise(JSON.parse(readFileSync(file, 'utf8')), r.requests, measuredMs, stoppingMs + (killed - started - measuredMs));
  console.log(`profile: ${file}`);
}

/** Self time by package/file and by function, in µs per request, over the samples of the measured window. */
function summarise(profile, requests, measuredMs, afterMs, inclusiveNames = INCLUSIVE) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const to = profile.endTime - afterMs * 1000;
  const from = to - measuredMs * 1000;
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i] ?? 0;
    if (t >= from && t <= to) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  let total = 0;
  for (const [id, us] of self) if (byId.get(id).callFrame.functionName !== '(idle)') total += us;
  console.log(`profiled CPU in the window: ${(total / requests).toFixed(0)} us/req`);
  const byFile = new Map();
  const byFn = new Map();
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id).callFrame;
    if (functionName === '(idle)') continue;
    const file = url.replace(/.*\/node_modules\/((@[^/]+\/)?[^/]+).*/, '$1').replace(/.*\/dist\//, '') || functionName;
    byFile.set(file, (byFile.get(file) ?? 0) + us);
    const fn = `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
    byFn.set(fn, (byFn.get(fn) ?? 0) + us);
  }
  const show = (title, map, n) => {
    console.log(title);
    for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`${(us / requests).toFixed(1).padStart(7)} us/req  ${name}`);
  };
  show('self time by package or file:', byFile, 25);
  show('self time by function:', byFn, 30);
  // Inclusive: the time of every sample with a frame of that function (or file) on its stack.
  const parent = new Map();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const inclusive = new Map(inclusiveNames.map((name) => [name, 0]));
  for (const [id, us] of self) {
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const { functionName, url } = byId.get(at).callFrame;
      for (const name of inclusiveNames) if (!seen.has(name) && (functionName === name || url.endsWith(name))) seen.add(name);
    }
    for (const name of seen) inclusive.set(name, inclusive.get(name) + us);
  }
  show('inclusive time:', inclusive, inclusiveNames.length);
}

const INCLUSIVE = [
  'canActivate',
  'execute',
  'clientAddressOf',
  'requestOriginOf',
  'accessRecord',
  'countEarly',
  'applyRateLimitOutcome',
  'hashApiKey',
  'principalOf',
  'requestContextMiddleware',
  'jsonBody',
  'transform',
  'get',
  'toApplicationResponse',
  'stringify',
  'parserOnIncoming',
  'handleWriteReq',
  'processTicksAndRejections',
  '@nestjs/core/router/router-execution-context.js',
  '@nestjs/core/router/router-proxy.js',
  'rxjs/dist/cjs/internal/Subscriber.js',
  'express/lib/response.js',
  'ioredis/built/Redis.js',
  'ioredis/built/DataHandler.js',
];

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}

module.exports = { summarise };
