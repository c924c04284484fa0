'use strict';
// A closed-loop HTTP load generator with microsecond latencies (autocannon's histogram has 1 ms resolution,
// too coarse for sub-millisecond budgets). `connections` loops each keep one request in flight over keep-alive.
const { Pool } = require('undici');

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * @param {{url: string, path: string, method?: string, headers?: object, body?: string|Buffer,
 *          connections?: number, durationMs?: number, warmupMs?: number, expectStatus?: number}} o
 */
async function load(o) {
  const origin = new URL(o.url).origin;
  const connections = o.connections ?? 10;
  const pool = new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const expect = o.expectStatus ?? 200;
  const run = async (durationMs, record) => {
    const latencies = [];
    let errors = 0;
    let count = 0;
    const end = performance.now() + durationMs;
    const loop = async () => {
      while (performance.now() < end) {
        const start = process.hrtime.bigint();
        try {
          const res = await pool.request({ path: o.path, method: o.method ?? 'GET', headers: o.headers, body: o.body });
          await res.body.dump();
          if (res.statusCode !== expect) errors++;
        } catch {
          errors++;
        }
        if (record) latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
        count++;
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: connections }, loop));
    const elapsed = (performance.now() - started) / 1000;
    return { latencies, errors, count, elapsed };
  };
  const warmup = await run(o.warmupMs ?? 2000, false);
  const r = await run(o.durationMs ?? 10_000, true);
  await pool.close();
  r.latencies.sort((a, b) => a - b);
  return {
    requests: r.count,
    // With the measured ones, for costs taken over the whole call (e.g. a process's CPU time).
    warmupRequests: warmup.count,
    errors: r.errors,
    rps: r.count / r.elapsed,
    p50: percentile(r.latencies, 50),
    p99: percentile(r.latencies, 99),
  };
}

/**
 * Over several runs of load(): mean req/s, p50 and p99, errors summed, and mean `cpu` (and `redisCpu`, `databaseCpu`)
 * when the runs carry cpuUsPerRequest (redisCpuUsPerRequest, databaseCpuUsPerRequest).
 */
function summarize(runs) {
  const mean = (key) => runs.reduce((s, r) => s + r[key], 0) / runs.length;
  const summary = { rps: mean('rps'), p50: mean('p50'), p99: mean('p99'), errors: runs.reduce((s, r) => s + r.errors, 0) };
  if (runs.some((r) => r.cpuUsPerRequest !== undefined)) summary.cpu = mean('cpuUsPerRequest');
  if (runs.some((r) => r.redisCpuUsPerRequest !== undefined)) summary.redisCpu = mean('redisCpuUsPerRequest');
  if (runs.some((r) => r.databaseCpuUsPerRequest !== undefined)) summary.databaseCpu = mean('databaseCpuUsPerRequest');
  return summary;
}

/** A text progress line on stderr, for long runs. */
function progress(label, done, total) {
  const width = 30;
  const filled = Math.round((done / total) * width);
  process.stderr.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`);
  if (done >= total) process.stderr.write('\n');
}

/**
 * Runs `measure(name)` for every name in each of `rounds` interleaved rounds (so drift of the machine affects every
 * route alike), with a progress line; answers each name's runs, for summarize().
 */
async function interleavedRounds(names, rounds, measure) {
  const results = Object.fromEntries(names.map((name) => [name, []]));
  const steps = rounds * names.length;
  let step = 0;
  progress('measuring', step, steps);
  for (let round = 0; round < rounds; round++) {
    for (const name of names) {
      results[name].push(await measure(name, round));
      progress('measuring', ++step, steps);
    }
  }
  return results;
}

module.exports = { load, summarize, progress, percentile, interleavedRounds };
