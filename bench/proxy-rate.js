'use strict';
// bench:proxy's fixed-rate mode (`npm run bench:proxy -- --rate 2000 --duration 8`): every route at the same offered
// load, open loop (bench/open-loop.js: latency from each request's scheduled send), in interleaved rounds, and the
// latency percentiles a gateway is judged by, beside the direct route and the bare forwarder of the same run.
const { availableParallelism, loadavg } = require('node:os');
const { concatSorted, openLoop, quantile } = require('./open-loop');
const { cpuMs, fmt, processCpuMs } = require('./service');

/** `--rate 2000 --duration 8 --rounds 2 --workers 4 --connections 8` from argv; null without --rate. */
function rateOptions(argv) {
  const value = (name, fallback) => {
    const at = argv.indexOf(`--${name}`);
    if (at === -1) return fallback;
    const n = Number(argv[at + 1]);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} takes a positive number`);
    return n;
  };
  const rate = value('rate', null);
  if (rate === null) return null;
  return {
    rate,
    durationMs: value('duration', 8) * 1000,
    warmupMs: value('warmup', 2) * 1000,
    rounds: value('rounds', 2),
    workers: value('workers', 4),
    connections: value('connections', 8),
  };
}

/** A progress line on stderr, redrawn in place on a terminal, every 10 s into a file. */
function progressLine() {
  let last = 0;
  return (text, final = false) => {
    if (process.stderr.isTTY) process.stderr.write(`\r${text.padEnd(100)}${final ? '\n' : ''}`);
    else if (final || Date.now() - last > 10_000) {
      last = Date.now();
      process.stderr.write(`${text}\n`);
    }
  };
}

/**
 * Each route in `routes` ({name, url, path, headers, pid, sandboxes}) at `o.rate` for `o.durationMs` per round, after a
 * warm-up at the same rate, in `o.rounds` interleaved rounds (every other one reversed). Returns, per route name, the
 * latencies of every round pooled, each round's p99, and the CPU per request of the route's serving process tree.
 */
async function measureAtRate(routes, body, o) {
  const results = new Map(routes.map((route) => [route.name, { latencies: [], lags: [], p99s: [], errors: 0, waitingMost: 0, cpu: [], own: [] }]));
  const show = progressLine();
  const steps = o.rounds * routes.length;
  let step = 0;
  for (let round = 0; round < o.rounds; round++) {
    for (const route of round % 2 === 0 ? routes : [...routes].reverse()) {
      const label = `fixed rate ${o.rate} req/s, round ${round + 1}/${o.rounds}, step ${step + 1}/${steps}: ${route.name}`;
      const started = Date.now();
      const ticking = setInterval(() => show(`${label} ${((Date.now() - started) / 1000).toFixed(0)}/${(o.warmupMs + o.durationMs) / 1000} s`), 500);
      let before;
      try {
        const run = await openLoop({
          url: route.url,
          path: route.path,
          method: 'POST',
          headers: route.headers,
          body,
          rate: o.rate,
          durationMs: o.durationMs,
          warmupMs: o.warmupMs,
          workers: o.workers,
          connections: o.connections,
          onRecording: () => (before = { tree: cpuMs(route.pid), own: processCpuMs(route.pid) }),
        });
        const r = results.get(route.name);
        r.latencies.push(run.latencies);
        r.lags.push(run.lags);
        r.p99s.push(quantile(run.latencies, 99));
        r.errors += run.errors;
        r.waitingMost = Math.max(r.waitingMost, run.waitingMost);
        r.cpu.push(((cpuMs(route.pid) - before.tree) * 1000) / run.latencies.length);
        r.own.push(((processCpuMs(route.pid) - before.own) * 1000) / run.latencies.length);
      } finally {
        clearInterval(ticking);
      }
      step++;
      show(`${label} done`, step === steps);
    }
  }
  const mean = (values) => values.reduce((s, v) => s + v, 0) / values.length;
  const summary = new Map();
  for (const [name, r] of results) {
    const latencies = concatSorted(r.latencies);
    const lags = concatSorted(r.lags);
    summary.set(name, {
      n: latencies.length,
      p50: quantile(latencies, 50),
      p90: quantile(latencies, 90),
      p99: quantile(latencies, 99),
      p999: quantile(latencies, 99.9),
      max: latencies[latencies.length - 1],
      p99s: r.p99s,
      errors: r.errors,
      lagP99: quantile(lags, 99),
      waitingMost: r.waitingMost,
      cpu: mean(r.cpu),
      sandboxCpu: mean(r.cpu) - mean(r.own),
    });
  }
  return summary;
}

/** The table and the bars of the latency-tail issue (no transforms, trivial and realistic transforms). */
function printRateReport(routes, summary, o, names, bodyBytes) {
  console.log(
    `\nbench:proxy --rate ${o.rate}: open loop (latency from each request's scheduled send), ${o.rounds} round(s) x ${o.durationMs / 1000} s per route ` +
      `after ${o.warmupMs / 1000} s of warm-up, ${o.workers} client workers x ${o.connections} connections, POST of a ${bodyBytes}-byte JSON body, loopback`,
  );
  console.log(
    `${availableParallelism()} CPUs, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} (other processes included)`,
  );
  console.log(
    '| route | requests | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | p99 by round | errors | server CPU µs/req (sandbox processes) | send lag p99 ms | most waiting for a connection |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|');
  for (const route of routes) {
    const r = summary.get(route.name);
    const sandbox = route.sandboxes ? ` (${fmt(r.sandboxCpu, 0)})` : '';
    console.log(
      `| ${route.name} | ${r.n} | ${fmt(r.p50, 3)} | ${fmt(r.p90, 3)} | ${fmt(r.p99, 3)} | ${fmt(r.p999, 3)} | ${fmt(r.max, 1)} | ${r.p99s.map((p) => fmt(p, 2)).join(', ')} | ${r.errors} | ${fmt(r.cpu, 0)}${sandbox} | ${fmt(r.lagP99, 3)} | ${r.waitingMost} |`,
    );
  }
  console.log(
    '\n(send lag: how late the generator itself sent, already inside each latency; large lags or many requests waiting for a connection mean the machine, not the route, was saturated)',
  );
  const reference = summary.get(names.reference);
  const none = summary.get(names.none);
  const bar = (text, value, ok) => console.log(`| ${text} | ${value} | ${ok ? 'yes' : 'NO'} |`);
  console.log('\n| bar (fixed rate) | measured | met |');
  console.log('|---|---:|:-:|');
  if (none && reference) {
    bar(
      "no transforms: p99 <= 1.5x the reference forwarder's",
      `${fmt(none.p99, 3)} ms = ${fmt(none.p99 / reference.p99, 2)}x ${fmt(reference.p99, 3)} ms`,
      none.p99 <= 1.5 * reference.p99,
    );
  }
  if (none) {
    bar('no transforms: p99 <= 2.5 ms', `${fmt(none.p99, 3)} ms`, none.p99 <= 2.5);
    bar('no transforms: p99.9 <= 10 ms', `${fmt(none.p999, 3)} ms`, none.p999 <= 10);
  }
  const trivial = summary.get(names.trivial);
  if (trivial) bar('trivial request + response transforms: p99 <= 4 ms', `${fmt(trivial.p99, 3)} ms`, trivial.p99 <= 4);
  const realistic = summary.get(names.realistic);
  if (realistic) bar('realistic transforms: p99 <= 5 ms', `${fmt(realistic.p99, 3)} ms`, realistic.p99 <= 5);
}

module.exports = { measureAtRate, printRateReport, rateOptions };
