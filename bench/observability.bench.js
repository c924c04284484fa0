'use strict';
// npm run bench:observability — what the access log, the metrics and the tracing cost per request: the same
// authenticated GET /applications/{id} on three processes started side by side over one PostgreSQL, measured in
// interleaved rounds of one run:
//   quiet          LOG_LEVEL=warn (no access lines), no METRICS_PORT, no OTEL_EXPORTER_OTLP_ENDPOINT (the reference)
//   access log     LOG_LEVEL=info: one access line per request (stdout to /dev/null)
//   metrics        METRICS_PORT set (the request histograms and the default process metrics)
//   both, then both plus OTEL_EXPORTER_OTLP_ENDPOINT to a local collector that accepts every export
const { spawn } = require('node:child_process');
const { interleavedRounds, load, progress, summarize } = require('./load');
const { cpuMs, createTenant, databaseUrl, fmt, freePort, recreateDatabase, startGatehouse } = require('./service');

const DB = 'gatehouse_bench_observability';
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

/** An OTLP/HTTP sink in a process of its own (not the load generator's): reads each export and answers 200. */
async function startCollector() {
  const port = await freePort();
  const code = `require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => s.writeHead(200, {'content-type': 'application/json'}).end('{}')); }).listen(${port}, '127.0.0.1');`;
  const child = spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`http://127.0.0.1:${port}/`);
      return { child, endpoint: `http://127.0.0.1:${port}` };
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error('collector did not start');
}

async function main() {
  await recreateDatabase(DB);
  const base = { DATABASE_URL: databaseUrl(DB), REDIS_URL: '', METRICS_PORT: '', OTEL_EXPORTER_OTLP_ENDPOINT: '' };
  const key = createTenant(base).application.key;
  const collector = await startCollector();
  const configs = {
    quiet: { ...base, LOG_LEVEL: 'warn' },
    'access log': { ...base, LOG_LEVEL: 'info' },
    metrics: { ...base, LOG_LEVEL: 'warn', METRICS_PORT: '0' },
    'access log + metrics': { ...base, LOG_LEVEL: 'info', METRICS_PORT: '0' },
    'all + tracing': { ...base, LOG_LEVEL: 'info', METRICS_PORT: '0', OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_BSP_SCHEDULE_DELAY: '1000' },
  };
  const names = Object.keys(configs);
  const services = {};
  for (const name of names) services[name] = await startGatehouse(configs[name]);

  const created = await fetch(`${services.quiet.base}/applications`, {
    method: 'POST',
    headers: { 'svc-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench target', type: 'private', permissions: ['token:read'] }),
  });
  const target = await created.json();
  const route = { path: `/applications/${target.id}`, headers: { 'svc-api-key': key } };

  progress('warming up', 0, names.length);
  for (const [i, name] of names.entries()) {
    await load({ url: services[name].base, ...route, connections: CONNECTIONS, warmupMs: 0, durationMs: 2000 });
    progress('warming up', i + 1, names.length);
  }
  const results = await interleavedRounds(names, ROUNDS, async (name) => {
    // The server's own CPU per request: unlike throughput, barely moved by what else the machine runs.
    const pid = services[name].child.pid;
    const before = cpuMs(pid);
    const run = await load({ url: services[name].base, ...route, connections: CONNECTIONS, warmupMs: 0, durationMs: DURATION_MS });
    run.cpuUsPerRequest = before === undefined ? NaN : ((cpuMs(pid) - before) * 1000) / run.requests;
    return run;
  });
  for (const name of names) services[name].child.kill('SIGTERM');
  collector.child.kill('SIGTERM');

  const quiet = summarize(results.quiet);
  console.log(
    `\nbench:observability  ${ROUNDS} interleaved rounds x ${DURATION_MS / 1000}s, ${CONNECTIONS} connections, GET /applications/{id}, loopback, PostgreSQL ${DB}`,
  );
  console.log('| process | req/s | p50 ms | p99 ms | errors | server CPU µs/req | CPU added µs/req |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const name of names) {
    const s = summarize(results[name]);
    console.log(`| ${name} | ${fmt(s.rps, 0)} | ${fmt(s.p50, 3)} | ${fmt(s.p99, 3)} | ${s.errors} | ${fmt(s.cpu, 0)} | ${fmt(s.cpu - quiet.cpu, 0)} |`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
