'use strict';
// Audit-log benchmark: `npm run bench:logs` (add `-- --quick`, or BENCH_QUICK=1, for a smoke run).
//   1. Ingestion: logs/s the worker moves from the BullMQ queue into PostgreSQL, beside a raw multi-row
//      INSERT of the same rows in the same run.
//   2. Write overhead: POST /applications requests/s with audit publishing on, beside the same with the
//      publisher disabled (autocannon over loopback, the worker running in both).
//   3. Queries over 10 million logs in 100 tenants: a filtered first page with total_items in a tenant with
//      100,000 rows, and keyset pages deep in a tenant with 1,000,000 rows, through the API.
//   4. Export: GET /logs/export of the 1,000,000-row tenant (NDJSON and CSV): rows/s, and the API's peak RSS
//      while it streams, beside its RSS before.
//   5. Log stream: logs/s an https stream delivers to a local HTTPS receiver, beside a raw INSERT of the same rows.
// Needs PostgreSQL (BENCH_ADMIN_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres) and Redis
// (BENCH_REDIS_URL, default redis://127.0.0.1:6379/13). The 10M-row database `gatehouse_bench` is seeded once
// with server-side SQL and reused by later runs. Progress goes to stderr, the figures to stdout.
const { Client, cpuMs, databaseUrl, recreateDatabase, migrate, freePort, bar, fmt, phase, stderr, QUICK, REDIS_URL, SIZES } = require('./logs/common');
const { loadAverage, sleep, sql, startApi, startWorker, serveApi, tenantIn, deleteKeys, makeEntries, withPositions } = require('./logs/common');
const { rawInsert, cpuByPid, cpuSinceMs, backendsOf } = require('./logs/common');
const { queries, exportRuns } = require('./logs/queries');
const { STREAM_ENV, startReceiver, createStreams, emptyTrail, streamThroughput, streamLag } = require('./logs/streams');

/**
 * How many logs the worker has written: the sum of the chain heads' positions (chains are gapless, and a head moves
 * in its logs' transaction). Reading the heads, one row a tenant, costs PostgreSQL nothing; a `count(*)` of `logs`
 * every 20 ms scanned the growing table and took a good part of a core away from the worker it was timing.
 */
async function countRows(client) {
  return Number((await client.query('SELECT coalesce(sum(seq), 0) AS n FROM log_chains')).rows[0].n);
}

/**
 * Ingestion into the time-partitioned trail while two https streams deliver their tenants' logs (a fifth of all) to a
 * local receiver, beside the raw multi-row INSERT of the same rows (no queue, no chain, no stream).
 */
async function ingestion() {
  const { Queue } = require('bullmq');
  const db = 'gatehouse_bench_ingest';
  const prefix = `bench-ingest-${process.pid}`;
  await recreateDatabase(db);
  await migrate(db);
  const url = databaseUrl(db);
  const partitions = await sql(url, async (c) => (await c.query("SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'logs'::regclass")).rows[0].n);
  phase(`ingestion: ${fmt(SIZES.ingest)} logs into ${partitions} time partitions, two https streams active, database ${db}`);
  const streamed = [tenantIn(db, 'stream-a'), tenantIn(db, 'stream-b')];
  const receiver = await startReceiver();
  await createStreams(db, streamed, receiver);
  // The set-up's own events (the tenants' and the streams' creations) would take the chain positions the raw INSERT
  // writes: dropped before the worker's outbox relay sees them.
  await sql(url, (c) => c.query('DELETE FROM audit_outbox'));
  const entries = makeEntries(SIZES.ingest).map((e, i) => (i % 10 === 0 || i % 10 === 5 ? { ...e, tenant_id: streamed[(i % 10) / 5].id } : e));
  const results = { partitions };

  const truncate = async () => {
    await emptyTrail(url);
    receiver.reset();
  };
  const rawEntries = withPositions(entries);
  const worker = startWorker(db, prefix, STREAM_ENV);
  await worker.started;
  const queue = new Queue('audit-logs', { connection: { url: REDIS_URL }, prefix });
  const measure = async (label, jobs, expected) => {
    await queue.pause();
    const fillStarted = Date.now();
    for (let i = 0; i < jobs.length; i += 200) {
      await queue.addBulk(jobs.slice(i, i + 200));
      bar(`queueing ${label}`, Math.min(i + 200, jobs.length), jobs.length, fillStarted);
    }
    const client = new Client({ connectionString: url });
    await client.connect();
    // CPU per log beside the rate: the worker's process, and the PostgreSQL backends of its pool (all connected by now:
    // the pool opened them at start and the heads' reads used them).
    const cpuBefore = { worker: cpuMs(worker.child.pid), pg: cpuByPid(await backendsOf(client, db)) };
    const started = performance.now();
    await queue.resume();
    let n = 0;
    while ((n = await countRows(client)) < expected) {
      bar(`worker ${label}`, n, expected, Date.now() - (performance.now() - started));
      await sleep(20);
    }
    const seconds = (performance.now() - started) / 1000;
    const workerCpuUs = (cpuMs(worker.child.pid) - cpuBefore.worker) * 1000;
    const pgCpuUs = cpuSinceMs(cpuBefore.pg, await backendsOf(client, db)) * 1000;
    bar(`worker ${label}`, n, expected, Date.now() - seconds * 1000);
    await client.end();
    return { rate: expected / seconds, workerCpuUsPerLog: workerCpuUs / expected, pgCpuUsPerLog: pgCpuUs / expected };
  };
  const opts = { removeOnComplete: true, removeOnFail: false };
  const batchJobs = [];
  for (let i = 0; i < entries.length; i += 500) batchJobs.push({ name: 'audit-log-batch', data: { logs: entries.slice(i, i + 500) }, opts });
  // Raw and worker alternate, twice each, so that a burst of load from elsewhere on the machine hits both.
  const raw = [];
  const batch = [];
  for (let round = 1; round <= 2; round++) {
    phase(`round ${round}: raw multi-row INSERT (the worker's statement, 2,000 rows each, 2 connections)`);
    raw.push(await rawInsert(url, rawEntries));
    await truncate();
    batch.push(await measure('audit-log-batch', batchJobs, entries.length));
    await truncate();
  }
  const mean = (runs, key) => (runs[0][key] + runs[1][key]) / 2;
  results.raw = { rate: mean(raw, 'rate'), pgCpuUsPerLog: mean(raw, 'pgCpuUsPerLog') };
  results.batch = { rate: mean(batch, 'rate'), workerCpuUsPerLog: mean(batch, 'workerCpuUsPerLog'), pgCpuUsPerLog: mean(batch, 'pgCpuUsPerLog') };
  const singles = entries.slice(0, SIZES.singleJobs).map((data) => ({ name: 'audit-log', data, opts }));
  results.single = await measure('audit-log', singles, singles.length);
  await truncate(); // once the streams caught up
  await queue.close();
  await worker.stop();
  await receiver.close();
  await deleteKeys(prefix);
  results.streams = { received: receiver.received, gaps: receiver.gaps, repeats: receiver.repeats };
  return results;
}

// --------------------------------------------------------------------------------------- write overhead

async function writeOverhead() {
  const autocannon = require('autocannon');
  const db = 'gatehouse_bench_writes';
  phase(`write overhead: POST /applications, ${SIZES.writePairs} pairs of ${SIZES.writeSeconds}s runs, publisher on / off in turn`);
  await recreateDatabase(db);
  await migrate(db);
  await deleteKeys('bench');
  const tenant = tenantIn(db, 'writes');
  const writesStarted = Date.now();
  const worker = startWorker(db);
  await worker.started;
  const ports = { on: await freePort(), off: await freePort() };
  // Both apis run side by side and take turns, so that load from elsewhere on the machine hits both alike.
  const apis = { on: startApi(db, ports.on, 'on'), off: startApi(db, ports.off, 'off') };
  await Promise.all([apis.on.started, apis.off.started]);
  const options = (publisher) => ({
    url: `http://127.0.0.1:${ports[publisher]}/applications`,
    method: 'POST',
    connections: 16,
    headers: { 'content-type': 'application/json', 'svc-api-key': tenant.key },
    body: JSON.stringify({ name: 'bench', type: 'management', permissions: ['log:read'] }),
  });
  await autocannon({ ...options('on'), duration: 2 }); // warm-up
  await autocannon({ ...options('off'), duration: 2 });
  const runs = { on: [], off: [] };
  for (let pair = 0; pair < SIZES.writePairs; pair++) {
    for (const publisher of pair % 2 === 0 ? ['on', 'off'] : ['off', 'on']) {
      const result = await autocannon({ ...options(publisher), duration: SIZES.writeSeconds });
      runs[publisher].push(result['2xx'] / SIZES.writeSeconds);
      bar('write runs', runs.on.length + runs.off.length, SIZES.writePairs * 2, writesStarted);
      if (result.non2xx || result.errors) stderr(`  publisher ${publisher}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    }
  }
  stderr(`  publisher on:  ${runs.on.map((r) => r.toFixed(0)).join(', ')} req/s`);
  stderr(`  publisher off: ${runs.off.map((r) => r.toFixed(0)).join(', ')} req/s`);
  await Promise.all([apis.on.stop(), apis.off.stop()]);
  // Every committed write got its log (the worker's relay covers the runs without the publisher).
  const countCreateLogs = "SELECT count(*) AS n FROM logs WHERE entity_type = 'application' AND operation = 'create'";
  const [committed, logged] = await sql(databaseUrl(db), async (c) => {
    const apps = Number((await c.query('SELECT count(*) AS n FROM applications')).rows[0].n);
    for (let i = 0; i < 300; i++) {
      const n = Number((await c.query(countCreateLogs)).rows[0].n);
      if (n >= apps) return [apps, n];
      await sleep(200);
    }
    return [apps, Number((await c.query(countCreateLogs)).rows[0].n)];
  });
  await worker.stop();
  await deleteKeys('bench');
  // Medians: a burst of outside load spoils one run, not the figure.
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { on: median(runs.on), off: median(runs.off), committed, logged };
}

async function main() {
  if (process.argv.includes('--serve-api')) return serveApi();
  const started = Date.now();
  const loadStart = loadAverage();
  stderr(`audit-log benchmark${QUICK ? ' (quick)' : ''}: node ${process.version}, ${require('node:os').availableParallelism()} cores`);
  // BENCH_ONLY=ingestion|writes|queries|export|streams|lag runs one part (streams: throughput and lag) (the table then shows only its rows).
  const only = process.env.BENCH_ONLY;
  const ingest = !only || only === 'ingestion' ? await ingestion() : undefined;
  const writes = !only || only === 'writes' ? await writeOverhead() : undefined;
  const query = !only || only === 'queries' ? await queries() : { first: {}, firstBig: {}, deep: {} };
  const exported = !only || only === 'export' ? await exportRuns() : {};
  const streamed = !only || only === 'streams' ? await streamThroughput() : undefined;
  const lag = !only || only === 'streams' || only === 'lag' ? await streamLag() : undefined;
  phase('results'); // closes an open progress bar

  const ms = (v) => `${v.toFixed(1)} ms`;
  const rows = [];
  if (ingest) {
    const us = (v) => `${v.toFixed(1)} µs/log`;
    const share = ingest.batch.rate / ingest.raw.rate;
    rows.push(
      ['Ingestion', 'raw multi-row INSERT (same rows)', `${fmt(Math.round(ingest.raw.rate))} logs/s`, ''],
      ['', '  PostgreSQL CPU', us(ingest.raw.pgCpuUsPerLog), ''],
      [
        '',
        `worker, audit-log-batch jobs (500 logs), ${ingest.partitions} partitions, 2 streams`,
        `${fmt(Math.round(ingest.batch.rate))} logs/s`,
        `>= 20k logs/s: ${ingest.batch.rate >= 20_000 ? 'met' : 'MISSED'}`,
      ],
      ['', '  share of raw', `${(share * 100).toFixed(0)}%`, `>= 50%: ${share >= 0.5 ? 'met' : 'MISSED'}`],
      [
        '',
        '  worker CPU / PostgreSQL CPU',
        `${us(ingest.batch.workerCpuUsPerLog)} / ${us(ingest.batch.pgCpuUsPerLog)}`,
        '(move far less with load than rates)',
      ],
      [
        '',
        '  streamed meanwhile (a fifth of the logs)',
        `${fmt(ingest.streams.received)} logs, ${ingest.streams.gaps} gaps, ${ingest.streams.repeats} repeats`,
        'in order',
      ],
      ['', 'worker, audit-log jobs (1 log each)', `${fmt(Math.round(ingest.single.rate))} logs/s`, '(another service, one job per log)'],
      ['', '  worker CPU / PostgreSQL CPU', `${us(ingest.single.workerCpuUsPerLog)} / ${us(ingest.single.pgCpuUsPerLog)}`, ''],
    );
  }
  if (writes) {
    rows.push(
      ['Write overhead', 'POST /applications, publisher off', `${writes.off.toFixed(0)} req/s`, ''],
      ['', 'POST /applications, publisher on', `${writes.on.toFixed(0)} req/s`, ''],
      ['', '  on / off', `${((writes.on / writes.off) * 100).toFixed(0)}%`, `>= 85%: ${writes.on / writes.off >= 0.85 ? 'met' : 'MISSED'}`],
      ['', '  committed creates / their logs', `${writes.committed} / ${writes.logged}`, writes.committed === writes.logged ? 'all logged' : 'MISSING LOGS'],
    );
  }
  for (const [label, r] of Object.entries(query.first)) {
    rows.push([
      `First page + total (${fmt(SIZES.medium)} rows)`,
      label,
      `p50 ${ms(r.p50)}  p95 ${ms(r.p95)}`,
      `p95 <= 100 ms: ${r.p95 <= 100 ? 'met' : 'MISSED'}`,
    ]);
  }
  for (const [label, r] of Object.entries(query.firstBig))
    rows.push([`First page + total (${fmt(SIZES.big)} rows)`, label, `p50 ${ms(r.p50)}  p95 ${ms(r.p95)}`, '(no target)']);
  for (const [label, r] of Object.entries(query.deep)) {
    rows.push([`Keyset pages (${fmt(SIZES.big)} rows)`, label, `p50 ${ms(r.p50)}  p95 ${ms(r.p95)}`, `p95 <= 20 ms: ${r.p95 <= 20 ? 'met' : 'MISSED'}`]);
  }
  const mib = (b) => `${(b / 1024 / 1024).toFixed(0)} MiB`;
  for (const [label, r] of Object.entries(exported)) {
    rows.push([
      'Export',
      label,
      `${fmt(Math.round(r.rows / r.seconds))} rows/s, ${mib(r.bytes)} in ${r.seconds.toFixed(1)} s; api RSS ${mib(r.before)} -> peak ${mib(r.peak)}`,
      'completes; peak flat in rows',
    ]);
  }
  const order = (r) => `${r.gaps} gaps, ${r.repeats} repeats`;
  if (streamed) {
    rows.push(
      ['Log stream', `raw multi-row INSERT of the same ${fmt(streamed.n)} rows`, `${fmt(Math.round(streamed.raw))} logs/s`, ''],
      [
        '',
        'https stream to a local HTTPS receiver (batches of 1000)',
        `${fmt(Math.round(streamed.rate))} logs/s`,
        `>= 20k logs/s: ${streamed.rate >= 20_000 ? 'met' : 'MISSED'}`,
      ],
      ['', '  share of raw', `${((streamed.rate / streamed.raw) * 100).toFixed(0)}%`, ''],
      ['', '  batches / TLS connections', `${streamed.requests} / ${streamed.connections}`, order(streamed)],
    );
  }
  if (lag) {
    const s = (v) => `${v.toFixed(2)} s`;
    rows.push(
      [
        'Stream lag',
        `steady ${fmt(lag.rate)} logs/s through the queue, ${lag.sendSeconds.toFixed(0)} s (written -> received)`,
        `p50 ${s(lag.p50)}  p99 ${s(lag.p99)}  max ${s(lag.max)}`,
        `p99 < 2 s: ${lag.p99 < 2 ? 'met' : 'MISSED'}`,
      ],
      ['', '  received / queued', `${fmt(lag.received)} / ${fmt(lag.queued)}`, `${order(lag)}${lag.received < lag.queued ? ', NOT ALL RECEIVED' : ''}`],
    );
  }
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  process.stdout.write(`\n${line(['Measure', 'Case', 'Figure', 'Target'])}\n| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |\n`);
  for (const r of rows) process.stdout.write(`${line(r)}\n`);
  process.stdout.write(
    `\n${QUICK ? 'quick run, ' : ''}${fmt(SIZES.total)} logs in the query database; total time ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
  );
  process.stdout.write(`load average (1, 5, 15 min): at the start ${loadStart}, at the end ${loadAverage()}\n`);
}

main().catch((error) => {
  process.stderr.write(`\nbench failed: ${error.stack ?? error}\n`);
  process.exit(1);
});
