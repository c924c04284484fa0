'use strict';
// Profiling aid for bench:proxy (not a benchmark): one Gatehouse process under --cpu-prof, one /proxy route
// (bench:proxy's payload and transforms) loaded for a while, then the CPU per request of the API process (split
// by thread: its main thread, V8's GC and compiler threads, libuv) and of its sandbox processes, the API process's
// system calls per request, and the API profile's self time grouped by where it is spent.
//   node --no-node-snapshot bench/profile-proxy.js none|trivial|realistic [seconds] [connections]
// BENCH_RATE=<req/s>: the load at that fixed rate (open loop, bench/open-loop.js) instead of closed loop, with the
// latency percentiles. BENCH_PROBE=1: also what bench/server-probe.js sees in the API process (event-loop delay,
// collections, bytes allocated per request).
const { spawn } = require('node:child_process');
const { mkdtempSync, readdirSync, readFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { load } = require('./load');
const { openLoop, quantile } = require('./open-loop');
const {
  childrenOf,
  createTenant,
  databaseUrl,
  ECHO_UPSTREAM_SOURCE,
  freePort,
  probe,
  processCpuMs,
  recreateDatabase,
  startGatehouse,
  startScript,
} = require('./service');
const { summarise } = require('./profile-route');
const { longTasks } = require('./long-tasks');
const { PAYLOAD, REALISTIC_REQUEST, REALISTIC_RESPONSE, TRIVIAL } = require('./proxy-transforms');

const DB = 'gatehouse_bench_proxy_profile';

/** CPU µs of each thread of a process, by thread name (summed over threads of the same name). */
function threadCpuUs(pid) {
  const out = {};
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      const name = /\((.*)\)/.exec(stat)[1].replace(/\d+$/, '#');
      const fields = stat.split(') ')[1].split(' ');
      out[name] = (out[name] ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10_000;
      out[`${name} (system)`] = (out[`${name} (system)`] ?? 0) + Number(fields[12]) * 10_000;
    } catch {
      // Gone in between.
    }
  }
  return out;
}

/** CPU µs (user + system) of the process alone. */
const processCpuUs = (pid) => (processCpuMs(pid) ?? NaN) * 1000;

function io(pid) {
  const text = readFileSync(`/proc/${pid}/io`, 'utf8');
  return { reads: Number(/syscr: (\d+)/.exec(text)[1]), writes: Number(/syscw: (\d+)/.exec(text)[1]) };
}

async function main() {
  const which = process.argv[2] ?? 'trivial';
  const seconds = Number(process.argv[3] ?? 8);
  const connections = Number(process.argv[4] ?? 10);
  await recreateDatabase(DB);
  const port = await freePort();
  const upstream = await startScript(ECHO_UPSTREAM_SOURCE, { PORT: String(port) });
  const env = { DATABASE_URL: databaseUrl(DB), PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8', LOG_LEVEL: 'warn', REDIS_URL: '' };
  const key = createTenant(env).application.key;
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-profile-'));
  if (process.env.BENCH_NO_PROFILE !== '1') process.env.BENCH_PROFILE_DIR = dir;
  if (process.env.BENCH_PROBE === '1') process.env.BENCH_PROBE_FILE = join(dir, 'probe.jsonl');
  const rate = Number(process.env.BENCH_RATE ?? 0);
  const api = await startGatehouse(env);
  try {
    const transforms = {
      none: {},
      trivial: { request_transform: { code: TRIVIAL }, response_transform: { code: TRIVIAL } },
      realistic: {
        request_transform: { code: REALISTIC_REQUEST },
        response_transform: { code: REALISTIC_RESPONSE },
        configuration: { SIGNING_SECRET: 'bench-signing-secret' },
      },
    }[which];
    if (!transforms) throw new Error('none, trivial or realistic');
    const res = await fetch(`${api.base}/proxies`, {
      method: 'POST',
      headers: { 'svc-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ name: which, destination_url: `http://127.0.0.1:${port}/`, require_auth: false, ...transforms }),
    });
    const proxy = await res.json();
    const o = {
      url: api.base,
      path: '/proxy/orders',
      method: 'POST',
      headers: { 'content-type': 'application/json', 'svc-proxy-key': proxy.key },
      body: PAYLOAD,
      connections,
    };
    const measure = async (durationMs) => {
      if (!rate) return load({ ...o, durationMs, warmupMs: 0 });
      const run = await openLoop({ ...o, rate, durationMs, warmupMs: 0 });
      const q = (p) => quantile(run.latencies, p);
      return {
        requests: run.latencies.length,
        rps: run.latencies.length / (run.elapsedMs / 1000),
        errors: run.errors,
        p50: q(50),
        p90: q(90),
        p99: q(99),
        p999: q(99.9),
      };
    };
    await measure(2000);
    const sandboxes = childrenOf(api.child.pid);
    const threadsBefore = threadCpuUs(api.child.pid);
    const sandboxBefore = sandboxes.map(processCpuUs);
    const ioBefore = io(api.child.pid);
    // BENCH_STRACE=1: the API process's system calls (every thread) counted by strace during the measured window.
    const strace =
      process.env.BENCH_STRACE === '1' ? spawn('strace', ['-c', '-f', '-p', String(api.child.pid)], { stdio: ['ignore', 'ignore', 'pipe'] }) : null;
    let straced = '';
    strace?.stderr.on('data', (chunk) => (straced += chunk));
    const started = performance.now();
    const endProbe = process.env.BENCH_PROBE_FILE ? probe(api.child.pid) : null;
    const r = await measure(seconds * 1000);
    const probed = endProbe ? await endProbe() : null;
    if (strace) {
      await new Promise((resolve) => {
        strace.once('exit', resolve);
        strace.kill('SIGINT');
      });
      console.log(`strace -c -f of the API process (${r.requests} requests):\n${straced}`);
    }
    const measuredMs = performance.now() - started;
    const threadsAfter = threadCpuUs(api.child.pid);
    const sandbox = sandboxes.reduce((sum, pid, i) => sum + processCpuUs(pid) - sandboxBefore[i], 0);
    const ioAfter = io(api.child.pid);
    const perReq = (us) => (us / r.requests).toFixed(1);
    let apiTotal = 0;
    const threads = Object.keys(threadsAfter)
      .map((name) => [name, threadsAfter[name] - (threadsBefore[name] ?? 0)])
      .filter(([, us]) => us > 0)
      .sort((a, b) => b[1] - a[1]);
    for (const [name, us] of threads) if (!name.endsWith(' (system)')) apiTotal += us;
    console.log(
      `${which}: ${r.rps.toFixed(0)} req/s p50 ${r.p50.toFixed(3)} ms, errors ${r.errors}; CPU per request: API ${perReq(apiTotal)} µs, sandbox processes ${perReq(sandbox)} µs`,
    );
    console.log(`API threads: ${threads.map(([name, us]) => `${name} ${perReq(us)}`).join(', ')} µs/req`);
    console.log(
      `API system calls per request: reads ${perReq((ioAfter.reads - ioBefore.reads) * 1)}, writes ${perReq((ioAfter.writes - ioBefore.writes) * 1)}`,
    );
    if (rate)
      console.log(`at ${rate} req/s (open loop): p50 ${r.p50.toFixed(3)} p90 ${r.p90.toFixed(3)} p99 ${r.p99.toFixed(3)} p99.9 ${r.p999.toFixed(3)} ms`);
    if (probed) {
      const gcs = Object.entries(probed.gc).map(
        ([kind, g]) => `${kind} ${g.count} (${((g.totalMs * 1000) / r.requests).toFixed(1)} µs/req, longest ${g.maxMs.toFixed(2)} ms)`,
      );
      const d = probed.loopDelayMs;
      console.log(`API heap: ${(probed.allocatedBytes / r.requests).toFixed(0)} bytes allocated per request; collections: ${gcs.join(', ') || 'none'}`);
      console.log(
        `API event-loop delay (1 ms timer): p50 ${d.p50.toFixed(2)} p90 ${d.p90.toFixed(2)} p99 ${d.p99.toFixed(2)} p99.9 ${d.p999.toFixed(2)} max ${d.max.toFixed(2)} ms`,
      );
      if (probed.heapProfile) allocationSites(JSON.parse(readFileSync(probed.heapProfile, 'utf8')), r.requests);
    }
    if (process.env.BENCH_NO_PROFILE === '1') return;
    const exited = new Promise((resolve) => api.child.once('exit', resolve));
    const killed = performance.now();
    api.child.kill('SIGTERM');
    await exited;
    const stoppingMs = performance.now() - killed;
    const file = join(
      dir,
      readdirSync(dir).find((f) => f.endsWith('.cpuprofile')),
    );
    const profile = JSON.parse(readFileSync(file, 'utf8'));
    const afterMs = stoppingMs + (killed - started - measuredMs);
    summarise(profile, r.requests, measuredMs, afterMs, INCLUSIVE);
    longTasks(profile, profile.endTime - (afterMs + measuredMs) * 1000, profile.endTime - afterMs * 1000);
    console.log(`profile: ${file}`);
  } finally {
    api.child.kill('SIGTERM');
    upstream.kill('SIGTERM');
  }
}

/** A sampling heap profile's bytes by allocating function (self), per request, largest first. */
function allocationSites(profile, requests) {
  const bySite = new Map();
  let total = 0;
  const walk = (node) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const site = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|dist)\//, '').replace(/^node:/, 'node:')}:${lineNumber + 1}`;
    bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    total += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  console.log(`sampled allocation: ${(total / requests).toFixed(0)} bytes per request; by allocating function:`);
  for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 30))
    console.log(`  ${(bytes / requests).toFixed(0).padStart(7)} B/req  ${site}`);
}

const INCLUSIVE = [
  'invoke',
  'transform',
  'run',
  'settle',
  'toResult',
  'transformBodyOf',
  'payloadOf',
  'forwardableHeaders',
  'transformHeaders',
  'readBounded',
  'readDestinationBody',
  'sendPayload',
  'execute',
  'enforceRateLimits',
  'inSpan',
  'send',
  'flush',
  'onFrame',
  'push',
  'parserOnIncoming',
  'handleWriteReq',
  'processTicksAndRejections',
  'processImmediate',
  'listOnTimeout',
  '(garbage collector)',
  'undici/lib/dispatcher/client-h1.js',
  'express/lib/router/index.js',
  'apps/api/src/http/access-log.js',
];

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
