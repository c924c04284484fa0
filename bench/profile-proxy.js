'use strict';
// Profiling aid for bench:proxy (not a benchmark): one Gatehouse process under --cpu-prof, one /proxy route
// (bench:proxy's payload and transforms) loaded for a while, then the CPU per request of the API process (split
// by thread: its main thread, V8's GC and compiler threads, libuv) and of its sandbox processes, the API process's
// system calls per request, and the API profile's self time grouped by where it is spent.
//   node --no-node-snapshot bench/profile-proxy.js none|trivial|realistic [seconds] [connections]
const { spawn } = require('node:child_process');
const { mkdtempSync, readdirSync, readFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { load } = require('./load');
const {
  childrenOf,
  createTenant,
  databaseUrl,
  ECHO_UPSTREAM_SOURCE,
  freePort,
  processCpuMs,
  recreateDatabase,
  startGatehouse,
  startScript,
} = require('./service');
const { summarise } = require('./profile-route');
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
    const o = { url: api.base, path: '/proxy/orders', method: 'POST', headers: { 'content-type': 'application/json', 'svc-proxy-key': proxy.key }, body: PAYLOAD, connections };
    await load({ ...o, durationMs: 2000, warmupMs: 0 });
    const sandboxes = childrenOf(api.child.pid);
    const threadsBefore = threadCpuUs(api.child.pid);
    const sandboxBefore = sandboxes.map(processCpuUs);
    const ioBefore = io(api.child.pid);
    // BENCH_STRACE=1: the API process's system calls (every thread) counted by strace during the measured window.
    const strace = process.env.BENCH_STRACE === '1' ? spawn('strace', ['-c', '-f', '-p', String(api.child.pid)], { stdio: ['ignore', 'ignore', 'pipe'] }) : null;
    let straced = '';
    strace?.stderr.on('data', (chunk) => (straced += chunk));
    const started = performance.now();
    const r = await load({ ...o, durationMs: seconds * 1000, warmupMs: 0 });
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
    console.log(`${which}: ${r.rps.toFixed(0)} req/s p50 ${r.p50.toFixed(3)} ms, errors ${r.errors}; CPU per request: API ${perReq(apiTotal)} µs, sandbox processes ${perReq(sandbox)} µs`);
    console.log(`API threads: ${threads.map(([name, us]) => `${name} ${perReq(us)}`).join(', ')} µs/req`);
    console.log(`API system calls per request: reads ${perReq((ioAfter.reads - ioBefore.reads) * 1)}, writes ${perReq((ioAfter.writes - ioBefore.writes) * 1)}`);
    if (process.env.BENCH_NO_PROFILE === '1') return;
    const exited = new Promise((resolve) => api.child.once('exit', resolve));
    const killed = performance.now();
    api.child.kill('SIGTERM');
    await exited;
    const stoppingMs = performance.now() - killed;
    const file = join(dir, readdirSync(dir).find((f) => f.endsWith('.cpuprofile')));
    summarise(JSON.parse(readFileSync(file, 'utf8')), r.requests, measuredMs, stoppingMs + (killed - started - measuredMs), INCLUSIVE);
    console.log(`profile: ${file}`);
  } finally {
    api.child.kill('SIGTERM');
    upstream.kill('SIGTERM');
  }
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
