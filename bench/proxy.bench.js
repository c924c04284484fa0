'use strict';
// npm run bench:proxy — the cost of the /proxy data plane, measured in one run against one local echo upstream:
//   direct to the upstream | through a bare undici forwarder (the reference) | through Gatehouse without
//   transforms | with trivial request and response transforms | with a realistic transform (JSON rewrite and an
//   HMAC signature via require('crypto')) | and the latency of the first call of newly created code.
// Gatehouse runs from dist (npm run build first, which the npm script does) over a local PostgreSQL database.
// The load generator is bench/load.js: closed-loop, keep-alive, microsecond latencies (autocannon's 1 ms histogram
// is too coarse for a 1 ms budget). BENCH_DURATION_MS, BENCH_CONNECTIONS and BENCH_ROUNDS tune it.
// `--rate <req/s>` measures at a fixed offered load instead (open loop, bench/proxy-rate.js): latency percentiles.
const { availableParallelism, loadavg } = require('node:os');
const { load, progress, summarize } = require('./load');
const { readdirSync, readFileSync } = require('node:fs');
const {
  cpuMs,
  createTenant,
  databaseUrl,
  ECHO_UPSTREAM_SOURCE,
  fmt,
  freePort,
  processCpuMs,
  recreateDatabase,
  startGatehouse,
  startScript,
} = require('./service');
const { FETCH_REQUEST, JWE_REQUEST, PAYLOAD, REALISTIC_REQUEST, REALISTIC_RESPONSE, TRIVIAL, partnerJwk } = require('./proxy-transforms');
const { measureAtRate, printRateReport, rateOptions } = require('./proxy-rate');

const DB = 'gatehouse_bench_proxy';
const DB_URL = databaseUrl(DB);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 6_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
// Three rounds by default, so the median of the per-round ratios below has a middle.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const FIRST_CALLS = 10;
const UNLOADED_DURATION_MS = Number(process.env.BENCH_UNLOADED_DURATION_MS ?? 3_000);
const DIRECT = 'direct to the upstream';
const REFERENCE = 'reference undici forwarder';
const NONE = 'Gatehouse, no transforms';
const TRIVIAL_ROUTE = 'Gatehouse, trivial request + response transforms';
const REALISTIC_ROUTE = 'Gatehouse, realistic transforms (JSON rewrite + HMAC)';
const PACKAGE_ROUTE = 'Gatehouse, a bundled package (node-jose JWE of the body)';
const FETCH_ROUTE = 'Gatehouse, a request transform that fetches from a local server first';
// The routes also measured over one connection.
const UNLOADED = new Set([DIRECT, REFERENCE, NONE, TRIVIAL_ROUTE]);
const AUTH_ROUTE = 'Gatehouse, no transforms, require_auth';
// The routes whose saturation is far above the fixed rates measured (--rate); the package and fetching routes are not.
const AT_RATE = new Set([DIRECT, REFERENCE, NONE, AUTH_ROUTE, TRIVIAL_ROUTE, REALISTIC_ROUTE]);
const ONLY = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY, 'i') : null;
const RATE = rateOptions(process.argv.slice(2));

// The reference: a bare streaming forwarder over one pooled undici Agent, what a proxy cannot do much less than.
const FORWARDER_SOURCE = `
const http = require('node:http');
const { pipeline } = require('node:stream');
const { Agent } = require(${JSON.stringify(require.resolve('undici'))});
const origin = process.env.ORIGIN;
const agent = new Agent({ keepAliveTimeout: 10000 });
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host']);
const strip = (h) => { const o = {}; for (const k in h) if (!HOP.has(k) && !k.startsWith('proxy-')) o[k] = h[k]; return o; };
const server = http.createServer((req, res) => {
  const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
  agent
    .request({ origin, path: req.url, method: req.method, headers: strip(req.headers), body: hasBody ? req : undefined })
    .then((up) => {
      res.writeHead(up.statusCode, strip(up.headers));
      pipeline(up.body, res, () => {});
    })
    .catch(() => { res.statusCode = 502; res.end(); });
});
server.keepAliveTimeout = 65000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send('ready'));
`;

/**
 * Context switches (voluntary and not) of a process and its children, every thread counted: how often the serving
 * processes went to sleep and were woken, which is what a transform's round trip to its sandbox process costs beyond
 * CPU on a busy machine. Linux /proc; undefined elsewhere.
 */
function wakeups(pid) {
  const ofProcess = (id) => {
    let total = 0;
    for (const task of readdirSync(`/proc/${id}/task`)) {
      const status = readFileSync(`/proc/${id}/task/${task}/status`, 'utf8');
      for (const match of status.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)$/gm)) total += Number(match[1]);
    }
    return total;
  };
  try {
    let total = ofProcess(pid);
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1]) === pid) total += ofProcess(entry);
      } catch {
        // Gone in between.
      }
    }
    return total;
  } catch {
    return undefined;
  }
}

async function createProxy(base, key, body) {
  const res = await fetch(`${base}/proxies`, {
    method: 'POST',
    headers: { 'svc-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`creating a proxy answered ${res.status}: ${await res.text()}`);
  return res.json();
}

async function main() {
  await recreateDatabase(DB);
  const upstreamPort = await freePort();
  const forwarderPort = await freePort();
  const upstream = await startScript(ECHO_UPSTREAM_SOURCE, { PORT: String(upstreamPort) });
  const upstreamOrigin = `http://127.0.0.1:${upstreamPort}`;
  const forwarder = await startScript(FORWARDER_SOURCE, { PORT: String(forwarderPort), ORIGIN: upstreamOrigin });

  const env = {
    DATABASE_URL: DB_URL,
    PROXY_ALLOW_HTTP: 'true',
    PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
    LOG_LEVEL: 'warn',
    REDIS_URL: '',
  };
  const created = createTenant(env);
  const key = created.application.key;
  const gatehouse = await startGatehouse(env);
  const children = [upstream, forwarder, gatehouse.child];
  try {
    const destination = `${upstreamOrigin}/`;
    const plain = await createProxy(gatehouse.base, key, { name: 'plain', destination_url: destination, require_auth: false });
    const authed = await createProxy(gatehouse.base, key, { name: 'authenticated', destination_url: destination });
    const trivial = await createProxy(gatehouse.base, key, {
      name: 'trivial',
      destination_url: destination,
      require_auth: false,
      request_transform: { code: TRIVIAL },
      response_transform: { code: TRIVIAL },
    });
    const realistic = await createProxy(gatehouse.base, key, {
      name: 'realistic',
      destination_url: destination,
      require_auth: false,
      request_transform: { code: REALISTIC_REQUEST },
      response_transform: { code: REALISTIC_RESPONSE },
      configuration: { SIGNING_SECRET: 'bench-signing-secret' },
    });
    const jwe = await createProxy(gatehouse.base, key, {
      name: 'package',
      destination_url: destination,
      require_auth: false,
      request_transform: { code: JWE_REQUEST },
      configuration: { PARTNER_JWK: partnerJwk() },
    });

    const fetching = await createProxy(gatehouse.base, key, {
      name: 'fetching',
      destination_url: destination,
      require_auth: false,
      request_transform: { code: FETCH_REQUEST },
      configuration: { LOOKUP_URL: `${upstreamOrigin}/lookup` },
    });

    const json = { 'content-type': 'application/json' };
    const routes = [
      { name: DIRECT, url: upstreamOrigin, path: '/orders', headers: json, pid: upstream.pid },
      { name: REFERENCE, url: `http://127.0.0.1:${forwarderPort}`, path: '/orders', headers: json, pid: forwarder.pid },
      { name: NONE, url: gatehouse.base, path: '/proxy/orders', headers: { ...json, 'svc-proxy-key': plain.key } },
      {
        name: AUTH_ROUTE,
        url: gatehouse.base,
        path: '/proxy/orders',
        headers: { ...json, 'svc-proxy-key': authed.key, 'svc-api-key': key },
      },
      { name: TRIVIAL_ROUTE, url: gatehouse.base, path: '/proxy/orders', headers: { ...json, 'svc-proxy-key': trivial.key } },
      { name: REALISTIC_ROUTE, url: gatehouse.base, path: '/proxy/orders', headers: { ...json, 'svc-proxy-key': realistic.key } },
      { name: PACKAGE_ROUTE, url: gatehouse.base, path: '/proxy/orders', headers: { ...json, 'svc-proxy-key': jwe.key } },
      { name: FETCH_ROUTE, url: gatehouse.base, path: '/proxy/orders', headers: { ...json, 'svc-proxy-key': fetching.key } },
    ]
      .map((route) => ({ pid: gatehouse.child.pid, sandboxes: route.pid === undefined, ...route }))
      // BENCH_ONLY=<regex> measures the routes whose name matches (e.g. BENCH_ONLY=trivial); the targets need them all.
      .filter((route) => !ONLY || ONLY.test(route.name))
      .filter((route) => !RATE || AT_RATE.has(route.name));
    if (RATE) {
      const summary = await measureAtRate(routes, PAYLOAD, RATE);
      printRateReport(routes, summary, RATE, { reference: REFERENCE, none: NONE, trivial: TRIVIAL_ROUTE, realistic: REALISTIC_ROUTE }, PAYLOAD.length);
      return;
    }
    const results = new Map(routes.map((r) => [r.name, []]));
    // Latency without queueing: one connection, so a request never waits behind another. Under the main
    // load (closed loop, CONNECTIONS connections) p50 is about CONNECTIONS / throughput, i.e. throughput
    // again; this is the time each hop itself adds.
    const unloadedRoutes = routes.filter((route) => UNLOADED.has(route.name));
    const unloaded = new Map(unloadedRoutes.map((r) => [r.name, []]));
    const steps = ROUNDS * (routes.length + unloadedRoutes.length);
    let step = 0;
    progress('measuring', step, steps);
    // Interleaved rounds, so drift of the machine affects every route alike; every other round in reverse order,
    // so a steady drift (load rising or falling through the run) does not favour the routes measured first.
    for (let round = 0; round < ROUNDS; round++) {
      for (const route of round % 2 === 0 ? routes : [...routes].reverse()) {
        const options = { url: route.url, path: route.path, method: 'POST', headers: route.headers, body: PAYLOAD, connections: CONNECTIONS };
        await load({ ...options, durationMs: 2000, warmupMs: 0 });
        // The CPU the serving process spends per request: less sensitive than req/s to other load on the machine.
        const cpuBefore = cpuMs(route.pid);
        const ownBefore = processCpuMs(route.pid);
        const wakeupsBefore = wakeups(route.pid);
        const run = await load({ ...options, durationMs: DURATION_MS, warmupMs: 0 });
        const cpuAfter = cpuMs(route.pid);
        run.cpuUsPerRequest = cpuBefore === undefined ? NaN : ((cpuAfter - cpuBefore) * 1000) / run.requests;
        run.ownCpuUsPerRequest = ownBefore === undefined ? NaN : ((processCpuMs(route.pid) - ownBefore) * 1000) / run.requests;
        run.wakeupsPerRequest = wakeupsBefore === undefined ? NaN : (wakeups(route.pid) - wakeupsBefore) / run.requests;
        results.get(route.name).push(run);
        progress('measuring', ++step, steps);
      }
      for (const route of unloadedRoutes) {
        const options = { url: route.url, path: route.path, method: 'POST', headers: route.headers, body: PAYLOAD, connections: 1 };
        await load({ ...options, durationMs: 1000, warmupMs: 0 });
        unloaded.get(route.name).push(await load({ ...options, durationMs: UNLOADED_DURATION_MS, warmupMs: 0 }));
        progress('measuring', ++step, steps);
      }
    }

    // The first call of newly created code: each proxy carries code no isolate has compiled yet.
    const firstCalls = [];
    for (let i = 0; i < FIRST_CALLS; i++) {
      const fresh = await createProxy(gatehouse.base, key, {
        name: `fresh ${i}`,
        destination_url: destination,
        require_auth: false,
        request_transform: { code: `${REALISTIC_REQUEST}\n// fresh ${i} ${Math.random()}` },
        configuration: { SIGNING_SECRET: 'bench-signing-secret' },
      });
      const started = process.hrtime.bigint();
      const res = await fetch(`${gatehouse.base}/proxy/orders`, { method: 'POST', headers: { ...json, 'svc-proxy-key': fresh.key }, body: PAYLOAD });
      const body = await res.arrayBuffer();
      firstCalls.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (res.status !== 200) throw new Error(`first call answered ${res.status}: ${Buffer.from(body).toString()}`);
    }
    firstCalls.sort((a, b) => a - b);

    const s = Object.fromEntries(routes.map((r) => [r.name, summarize(results.get(r.name))]));
    const direct = s[DIRECT];
    const reference = s[REFERENCE];
    const none = s[NONE];
    const trivialS = s[TRIVIAL_ROUTE];

    console.log(
      `\nbench:proxy  ${ROUNDS} round(s) x ${DURATION_MS / 1000}s per route, ${CONNECTIONS} connections, POST of a ${PAYLOAD.length}-byte JSON body, loopback, PostgreSQL ${DB}`,
    );
    // Everything (load generator, upstream, forwarder, Gatehouse, PostgreSQL) shares this machine's CPUs.
    console.log(
      `${availableParallelism()} CPUs, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} (other processes included)`,
    );
    console.log(
      '| route | req/s | p50 ms | p99 ms | errors | server CPU µs/req (API + sandbox processes) | of which sandbox processes | server context switches/req |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const route of routes) {
      const r = s[route.name];
      const runs = results.get(route.name);
      const mean = (key) => runs.reduce((sum, run) => sum + run[key], 0) / runs.length;
      const sandboxes = route.pid === gatehouse.child.pid ? fmt(r.cpu - mean('ownCpuUsPerRequest'), 0) : '';
      console.log(
        `| ${route.name} | ${fmt(r.rps, 0)} | ${fmt(r.p50, 3)} | ${fmt(r.p99, 3)} | ${r.errors} | ${fmt(r.cpu, 0)} | ${sandboxes} | ${fmt(mean('wakeupsPerRequest'), 1)} |`,
      );
    }
    if (unloadedRoutes.length > 0) {
      console.log(`\none connection (no queueing), ${ROUNDS} round(s) x ${UNLOADED_DURATION_MS / 1000}s per route`);
      console.log('| route | req/s | p50 ms | p99 ms | errors |');
      console.log('|---|---:|---:|---:|---:|');
      for (const route of unloadedRoutes) {
        const r = summarize(unloaded.get(route.name));
        console.log(`| ${route.name} | ${fmt(r.rps, 0)} | ${fmt(r.p50, 3)} | ${fmt(r.p99, 3)} | ${r.errors} |`);
      }
    }
    const median = firstCalls[Math.floor(firstCalls.length / 2)];
    const worst = firstCalls[firstCalls.length - 1];
    console.log(`\nfirst call of newly created code (${FIRST_CALLS} proxies, end to end): median ${fmt(median)} ms, worst ${fmt(worst)} ms`);

    if (!direct || !reference || !none || !trivialS) {
      console.log('\n(BENCH_ONLY: the targets need every route)');
      return;
    }
    // Each ratio as the median of its per-round ratios (route and denominator measured in the same round, a minute
    // apart at most), which one disturbed run cannot drag as it drags a ratio of means; the ratio of the requests
    // summed over every round is printed beside it.
    const ratioOf = (name, of) => {
      const runs = results.get(name);
      const base = results.get(of);
      const perRound = runs.map((run, i) => run.rps / base[i].rps).sort((a, b) => a - b);
      const middle = perRound.length / 2;
      const median = perRound.length % 2 === 1 ? perRound[Math.floor(middle)] : (perRound[middle - 1] + perRound[middle]) / 2;
      const summed = runs.reduce((sum, run) => sum + run.requests, 0) / base.reduce((sum, run) => sum + run.requests, 0);
      return { median, summed, perRound };
    };
    const shown = (r) => `${fmt(r.median * 100, 1)}% (rounds ${r.perRound.map((x) => fmt(x * 100, 1)).join(', ')}; summed ${fmt(r.summed * 100, 1)}%)`;
    const ratio = ratioOf(NONE, REFERENCE);
    const added = none.p50 - direct.p50;
    const trivialRatio = ratioOf(TRIVIAL_ROUTE, NONE);
    const realisticS = s[REALISTIC_ROUTE];
    console.log('\n| target | measured | met |');
    console.log('|---|---:|:-:|');
    console.log(`| no transforms >= 70% of the reference forwarder's req/s (median of rounds) | ${shown(ratio)} | ${ratio.median >= 0.7 ? 'yes' : 'NO'} |`);
    console.log(`| no transforms add <= 1 ms to p50 over direct | ${fmt(added, 3)} ms | ${added <= 1 ? 'yes' : 'NO'} |`);
    // For scale: what any forwarder adds on this machine, and Gatehouse's share beyond it.
    console.log(`| (for scale) the reference forwarder adds to p50 over direct | ${fmt(reference.p50 - direct.p50, 3)} ms | |`);
    console.log(`| (for scale) Gatehouse adds to p50 over the reference forwarder | ${fmt(none.p50 - reference.p50, 3)} ms | |`);
    if (unloaded.has(DIRECT) && unloaded.has(NONE)) {
      const addedAlone = summarize(unloaded.get(NONE)).p50 - summarize(unloaded.get(DIRECT)).p50;
      console.log(`| no transforms add <= 1 ms to p50 over direct, one connection | ${fmt(addedAlone, 3)} ms | ${addedAlone <= 1 ? 'yes' : 'NO'} |`);
    }
    console.log(
      `| trivial transforms >= 50% of no-transform req/s (median of rounds) | ${shown(trivialRatio)} | ${trivialRatio.median >= 0.5 ? 'yes' : 'NO'} |`,
    );
    if (realisticS) {
      const realisticRatio = ratioOf(REALISTIC_ROUTE, NONE);
      console.log(
        `| realistic transforms >= 40% of no-transform req/s (median of rounds) | ${shown(realisticRatio)} | ${realisticRatio.median >= 0.4 ? 'yes' : 'NO'} |`,
      );
    }
    if (s[PACKAGE_ROUTE]) {
      const packageRatio = ratioOf(PACKAGE_ROUTE, NONE);
      console.log(`| (for scale) a bundled package (node-jose JWE) as % of no-transform req/s (median of rounds) | ${shown(packageRatio)} | |`);
    }
    if (s[FETCH_ROUTE]) {
      const fetchRatio = ratioOf(FETCH_ROUTE, NONE);
      console.log(`| (for scale) a transform that fetches from a local server first, as % of no-transform req/s (median of rounds) | ${shown(fetchRatio)} | |`);
    }
    console.log(`| first call of new code <= 50 ms (worst of ${FIRST_CALLS}) | ${fmt(worst)} ms | ${worst <= 50 ? 'yes' : 'NO'} |`);
    console.log(
      `| (for scale) CPU per request: no transforms ${fmt(none.cpu, 0)} µs, trivial ${fmt(trivialS.cpu, 0)} µs` +
        `${realisticS ? `, realistic ${fmt(realisticS.cpu, 0)} µs` : ''} | | |`,
    );
  } finally {
    for (const child of children) child.kill('SIGTERM');
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
