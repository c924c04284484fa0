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
const { spawn } = require('node:child_process');
const { randomBytes, randomUUID } = require('node:crypto');
const path = require('node:path');
const { Client } = require('pg');
const { percentile } = require('./load');
const { ADMIN_URL, ROOT, cpuMs, createTenant, databaseUrl, freePort, recreateDatabase } = require('./service');
const { migrate, unpartitionLogs, withoutLogIndexes } = require('./log-seed');

const QUICK = process.argv.includes('--quick') || /^(1|true|yes)$/i.test(process.env.BENCH_QUICK ?? '');
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/13';

const SIZES = QUICK
  ? { ingest: 40_000, singleJobs: 10_000, writeSeconds: 3, writePairs: 3, queryTenants: 100, total: 1_000_000, big: 200_000, medium: 100_000, samples: 60 }
  : {
      ingest: 200_000,
      singleJobs: 50_000,
      writeSeconds: 5,
      writePairs: 8,
      queryTenants: 100,
      total: 10_000_000,
      big: 1_000_000,
      medium: 100_000,
      samples: 200,
    };
const QUERY_DB = QUICK ? 'gatehouse_bench_quick' : 'gatehouse_bench';
// 2: rows carry chain positions (and placeholder hashes: the bench reads, it does not verify). 3: time partitions
// (seeded unpartitioned, then converted by the migration as an upgrade does).
const SEED_VERSION = 3;

// ---------------------------------------------------------------------------------------------- helpers

const { bar, fmt, phase, stderr } = require('./progress-bar');
const loadAverage = () =>
  require('node:os')
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function sql(url, fn) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A built app as a child process (what `npm run start:*` runs); resolves once `ready` matches its stdout. */
function startProcess(script, args, env, ready) {
  const child = spawn(process.execPath, ['--no-node-snapshot', path.join(ROOT, script), ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const started = new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk;
      const match = output.match(ready);
      if (match) resolve(match);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${script} exited with ${code}: ${output.slice(-2000)}`)));
  });
  return {
    child,
    started,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** The api, started by this same script (`--serve-api`), so that the publisher can be switched off for a run. */
function startApi(database, port, publisher, env = {}) {
  return startProcess(
    'bench/logs.bench.js',
    ['--serve-api'],
    { DATABASE_URL: databaseUrl(database), REDIS_URL, QUEUE_PREFIX: 'bench', PORT: String(port), BENCH_PUBLISHER: publisher, LOG_LEVEL: 'info', ...env },
    /gatehouse api listening/,
  );
}

function startWorker(database, prefix = 'bench') {
  return startProcess(
    'dist/apps/worker/src/main.js',
    [],
    { DATABASE_URL: databaseUrl(database), REDIS_URL, QUEUE_PREFIX: prefix, LOG_LEVEL: 'info' },
    /gatehouse worker running/,
  );
}

async function serveApi() {
  // Child mode: the api as `npm run start:api` runs it, except that BENCH_PUBLISHER=off makes the audit
  // publisher a no-op (events then stay in the outbox, where the worker's relay picks them up).
  require('reflect-metadata');
  const { createServer } = require('node:http');
  const { loadConfig } = require(path.join(ROOT, 'dist/libs/config/src'));
  const { AuditEventPublisher } = require(path.join(ROOT, 'dist/libs/domain/src'));
  const { openDatabase } = require(path.join(ROOT, 'dist/libs/persistence/src'));
  const { createApiApp } = require(path.join(ROOT, 'dist/apps/api/src/app'));
  const config = loadConfig();
  const database = await openDatabase({ url: config.databaseUrl, dataDir: '', poolSize: config.databasePoolSize });
  const app = await createApiApp({ config, database, runJobs: false, logger: false });
  if (process.env.BENCH_PUBLISHER === 'off') app.get(AuditEventPublisher).publish = async () => undefined;
  const server = createServer({ keepAliveTimeout: 65_000 }, app.getHttpAdapter().getInstance());
  await new Promise((resolve) => server.listen(config.port, '127.0.0.1', resolve));
  process.stdout.write('gatehouse api listening\n');
  process.on('SIGTERM', () =>
    server.close(() =>
      app
        .close()
        .then(() => database.close())
        .then(() => process.exit(0)),
    ),
  );
  server.closeIdleConnections?.();
}

/** A tenant through the CLI (service.js), without Redis: its id and management key. */
function tenantIn(database, name) {
  const created = createTenant({ DATABASE_URL: databaseUrl(database), REDIS_URL: '' }, name);
  return { id: created.tenant.id, key: created.application.key };
}

async function deleteKeys(prefix) {
  const IORedis = require('ioredis');
  const redis = new IORedis(REDIS_URL);
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  redis.disconnect();
}

// -------------------------------------------------------------------------------------------- ingestion

const ENTITY_TYPES = ['application', 'bank', 'card', 'proxy', 'reactor', 'tenant', 'token'];
const OPERATIONS = ['create', 'update', 'delete', 'read'];

function makeEntries(n) {
  const tenants = Array.from({ length: 100 }, () => randomUUID());
  const base = Date.now() - n;
  return Array.from({ length: n }, (_, i) => ({
    id: randomUUID(),
    tenant_id: tenants[i % 100],
    actor_id: randomUUID(),
    actor_type: 'application',
    entity_type: ENTITY_TYPES[i % 7],
    entity_id: `ent_${i % 5000}`,
    operation: OPERATIONS[i % 4],
    message: `Benchmark change number ${i} of an entity`,
    created_at: new Date(base + i).toISOString(),
  }));
}

// The reference: the rows' plain multi-row INSERT (the worker's statement before the chain), without the queue, the
// validation, the outbox clean-up, the chain heads' locks or the hashing. Positions and hashes are computed before
// the clock starts (the columns are NOT NULL), so the reference pays the same columns and indexes, and the same
// uniqueness of ids across the time partitions (claimed in log_ids, as every writer does).
const RAW_INSERT = `WITH b AS MATERIALIZED (SELECT * FROM json_populate_recordset(NULL::logs, $1::json)),
    claimed AS (INSERT INTO log_ids (id, tenant_id) SELECT id, tenant_id FROM b ON CONFLICT (id) DO NOTHING RETURNING id)
  INSERT INTO logs (id, tenant_id, actor_id, actor_type, entity_type, entity_id, operation, message, created_at, seq, hash)
  SELECT id, tenant_id, actor_id, actor_type, entity_type, entity_id, operation, message, created_at, seq, hash
  FROM b WHERE id IN (SELECT id FROM claimed)`;

function withPositions(entries) {
  const next = new Map();
  return entries.map((e) => {
    const seq = (next.get(e.tenant_id) ?? 0) + 1;
    next.set(e.tenant_id, seq);
    return { ...e, seq, hash: `\\x${randomBytes(32).toString('hex')}` };
  });
}

async function rawInsert(url, entries, batch = 2000, connections = 2) {
  const clients = await Promise.all(
    Array.from({ length: connections }, async () => {
      const c = new Client({ connectionString: url });
      await c.connect();
      return c;
    }),
  );
  const backends = await Promise.all(clients.map(async (c) => (await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid));
  const cpuBefore = cpuByPid(backends);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      while (next < entries.length) {
        const chunk = entries.slice(next, (next += batch));
        await c.query(RAW_INSERT, [JSON.stringify(chunk)]);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const pgCpuUs = cpuSinceMs(cpuBefore, backends) * 1000;
  await Promise.all(clients.map((c) => c.end()));
  return { rate: entries.length / seconds, pgCpuUsPerLog: pgCpuUs / entries.length };
}

/**
 * CPU time (ms, from /proc: PostgreSQL's backends are readable as another user) that backends used between `before`
 * (pid → ms, from cpuByPid) and now, over the backends of both moments: one that connected since counts from zero;
 * one that has gone (a pool closing an idle connection) is left out.
 */
function cpuSinceMs(before, pids) {
  let total = 0;
  for (const pid of new Set([...before.keys(), ...pids])) {
    const now = cpuMs(pid);
    if (now !== undefined) total += now - (before.get(pid) ?? 0);
  }
  return total;
}

function cpuByPid(pids) {
  return new Map(pids.map((pid) => [pid, cpuMs(pid) ?? 0]));
}

/** The PostgreSQL backends connected to database `name`, but for the asking one. */
async function backendsOf(client, name) {
  return (await client.query('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name])).rows.map((r) => r.pid);
}

/**
 * How many logs the worker has written: the sum of the chain heads' positions (chains are gapless, and a head moves
 * in its logs' transaction). Reading the heads, one row a tenant, costs PostgreSQL nothing; a `count(*)` of `logs`
 * every 20 ms scanned the growing table and took a good part of a core away from the worker it was timing.
 */
async function countRows(client) {
  return Number((await client.query('SELECT coalesce(sum(seq), 0) AS n FROM log_chains')).rows[0].n);
}

async function ingestion() {
  const { Queue } = require('bullmq');
  const db = 'gatehouse_bench_ingest';
  const prefix = `bench-ingest-${process.pid}`;
  phase(`ingestion: ${fmt(SIZES.ingest)} logs, database ${db}`);
  await recreateDatabase(db);
  await migrate(db);
  const url = databaseUrl(db);
  const entries = makeEntries(SIZES.ingest);
  const results = {};

  const truncate = () => sql(url, (c) => c.query('TRUNCATE logs, log_ids, log_chains, log_checkpoints'));
  const rawEntries = withPositions(entries);
  const worker = startWorker(db, prefix);
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
  await queue.close();
  await worker.stop();
  await deleteKeys(prefix);
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

// ---------------------------------------------------------------------------------------------- queries

async function seedQueryDatabase() {
  const url = databaseUrl(QUERY_DB);
  const exists = await sql(ADMIN_URL, async (c) => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [QUERY_DB])).rowCount > 0);
  if (exists) {
    const seeded = await sql(url, async (c) => {
      const t = await c.query("SELECT to_regclass('bench_seed') AS t");
      if (!t.rows[0].t) return null;
      return (
        (
          await c.query('SELECT * FROM bench_seed WHERE version = $1 AND total = $2 AND big = $3 AND medium = $4', [
            SEED_VERSION,
            SIZES.total,
            SIZES.big,
            SIZES.medium,
          ])
        ).rows[0] ?? null
      );
    });
    if (seeded) {
      phase(`queries: reusing ${QUERY_DB} (${fmt(SIZES.total)} logs, seeded ${seeded.seeded_at.toISOString()})`);
      return seeded;
    }
  }
  phase(`queries: seeding ${QUERY_DB} with ${fmt(SIZES.total)} logs in ${SIZES.queryTenants} tenants (once; later runs reuse it)`);
  await recreateDatabase(QUERY_DB);
  await migrate(QUERY_DB);
  await unpartitionLogs(QUERY_DB);
  const big = tenantIn(QUERY_DB, 'bench-big');
  const medium = tenantIn(QUERY_DB, 'bench-medium');
  const rest = SIZES.total - SIZES.big - SIZES.medium;
  const others = SIZES.queryTenants - 2;
  const tenants = [
    { id: big.id, rows: SIZES.big },
    { id: medium.id, rows: SIZES.medium },
    ...Array.from({ length: others }, (_, i) => ({ id: randomUUID(), rows: Math.floor(rest / others) + (i < rest % others ? 1 : 0) })),
  ];
  await sql(url, async (c) => {
    await c.query('SET synchronous_commit = off');
    await c.query("SET maintenance_work_mem = '1GB'");
    await c.query('SET max_parallel_maintenance_workers = 2');
    const buildIndexes = await withoutLogIndexes(c);
    const started = Date.now();
    let done = 0;
    const year = 365 * 24 * 3600 * 1000;
    for (const tenant of tenants) {
      const step = Math.max(1, Math.floor(year / tenant.rows)); // whole milliseconds: cursors carry milliseconds
      for (let from = 0; from < tenant.rows; from += 250_000) {
        const to = Math.min(tenant.rows, from + 250_000) - 1;
        await c.query(
          `INSERT INTO logs (id, tenant_id, actor_id, actor_type, entity_type, entity_id, operation, message, created_at, seq, hash)
           SELECT gen_random_uuid(), $1::uuid,
                  CASE WHEN g % 5 = 0 THEN NULL ELSE $2::uuid END,
                  CASE WHEN g % 5 = 0 THEN 'system' ELSE 'application' END,
                  (ARRAY['application','bank','card','proxy','reactor','tenant','token'])[1 + g % 7],
                  'ent_' || (g % 5000),
                  (ARRAY['create','update','delete','read'])[1 + g % 4],
                  'Entity ent_' || (g % 5000) || ' changed (seeded row ' || g || ')',
                  date_trunc('milliseconds', timestamptz '2025-01-01T00:00:00Z' + (g::bigint * $3) * interval '1 millisecond'),
                  g + 1, sha256(convert_to(g::text, 'UTF8'))
           FROM generate_series($4::int, $5::int) AS g`,
          [tenant.id, randomUUID(), step, from, to],
        );
        done += to - from + 1;
        bar('seeding logs', done, SIZES.total, started);
      }
    }
    await buildIndexes();
    await c.query('INSERT INTO log_chains (tenant_id, seq, hash) SELECT DISTINCT ON (tenant_id) tenant_id, seq, hash FROM logs ORDER BY tenant_id, seq DESC');
    phase('time partitions: the migration converts the seeded table');
    await migrate(QUERY_DB);
    phase('vacuum analyze (visibility map for index-only counts)');
    await c.query('VACUUM (ANALYZE) logs_legacy');
    await c.query('ANALYZE logs');
    await c.query(`CREATE TABLE bench_seed (version int, total int, big int, medium int, big_tenant uuid, big_key text,
      medium_tenant uuid, medium_key text, seeded_at timestamptz DEFAULT now())`);
    await c.query('INSERT INTO bench_seed (version, total, big, medium, big_tenant, big_key, medium_tenant, medium_key) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)', [
      SEED_VERSION,
      SIZES.total,
      SIZES.big,
      SIZES.medium,
      big.id,
      big.key,
      medium.id,
      medium.key,
    ]);
  });
  return sql(url, async (c) => (await c.query('SELECT * FROM bench_seed')).rows[0]);
}

/**
 * `n` GETs one after another, each timed: `pathAt(i, previous)` gives the i-th path (`previous` is the body of the
 * answer before, for pages that follow one another) and each answer must be a 200 whose body passes `check`.
 */
async function timeRequests(port, key, n, pathAt, check = () => true) {
  const { request } = require('undici');
  const latencies = [];
  let previous;
  for (let i = 0; i < n; i++) {
    const p = pathAt(i, previous);
    const started = performance.now();
    const res = await request(`http://127.0.0.1:${port}${p}`, { headers: { 'svc-api-key': key } });
    const body = await res.body.json();
    latencies.push(performance.now() - started);
    if (res.statusCode !== 200 || !check(body)) throw new Error(`${p}: ${res.statusCode} ${JSON.stringify(body)}`);
    previous = body;
  }
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p95: percentile(latencies, 95), n: latencies.length };
}

const timePaths = (port, key, paths) => timeRequests(port, key, paths.length, (i) => paths[i]);

async function queries() {
  const seed = await seedQueryDatabase();
  const port = await freePort();
  const api = startApi(QUERY_DB, port, 'on');
  await api.started;
  const n = SIZES.samples;
  const pick = (xs, i) => xs[i % xs.length];
  const months = Array.from({ length: 12 }, (_, m) => [
    `2025-${String(m + 1).padStart(2, '0')}-01T00:00:00Z`,
    `2025-${String(m + 2).padStart(2, '0')}-01T00:00:00Z`,
  ]).slice(0, 11);
  const firstPages = (tenantKey) => ({
    unfiltered: Array.from({ length: n }, () => '/logs?size=20'),
    entity_type: Array.from({ length: n }, (_, i) => `/logs?entity_type=${pick(ENTITY_TYPES, i)}&size=20`),
    'entity_type + entity_id': Array.from({ length: n }, (_, i) => `/logs?entity_type=${pick(ENTITY_TYPES, i)}&entity_id=ent_${(i * 37) % 5000}&size=20`),
    'date range (1 month)': Array.from({ length: n }, (_, i) => `/logs?start_date=${pick(months, i)[0]}&end_date=${pick(months, i)[1]}&size=20`),
    'entity_type + date range': Array.from(
      { length: n },
      (_, i) => `/logs?entity_type=${pick(ENTITY_TYPES, i)}&start_date=${pick(months, i)[0]}&end_date=${pick(months, i)[1]}&size=20`,
    ),
    key: tenantKey,
  });
  const results = { first: {}, firstBig: {}, deep: {} };
  phase(`queries: first pages with total_items, tenant of ${fmt(SIZES.medium)} rows (${n} requests each)`);
  const medium = firstPages(seed.medium_key);
  await timePaths(port, seed.medium_key, medium.unfiltered.slice(0, 20)); // warm-up
  for (const [label, paths] of Object.entries(medium)) if (label !== 'key') results.first[label] = await timePaths(port, seed.medium_key, paths);
  phase(`queries: first pages with total_items, tenant of ${fmt(SIZES.big)} rows (for reference)`);
  const bigPages = firstPages(seed.big_key);
  for (const [label, paths] of Object.entries(bigPages))
    if (label !== 'key') results.firstBig[label] = await timePaths(port, seed.big_key, paths.slice(0, Math.ceil(n / 2)));

  phase(`queries: keyset pages deep in the tenant of ${fmt(SIZES.big)} rows`);
  const deepCursor = async (filter, offset) => {
    const row = await sql(
      databaseUrl(QUERY_DB),
      async (c) =>
        (
          await c.query(
            `SELECT created_at, id FROM logs WHERE tenant_id = $1 ${filter ? 'AND entity_type = $3' : ''} ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
            filter ? [seed.big_tenant, offset, filter] : [seed.big_tenant, offset],
          )
        ).rows[0],
    );
    return Buffer.from(`${row.created_at.toISOString()}|${row.id}`, 'utf8').toString('base64url');
  };
  for (const [label, filter, offset] of [
    [`unfiltered, from row ${fmt(Math.floor(SIZES.big * 0.8))}`, null, Math.floor(SIZES.big * 0.8)],
    [`entity_type, from row ${fmt(Math.floor((SIZES.big / 7) * 0.8))}`, 'card', Math.floor((SIZES.big / 7) * 0.8)],
  ]) {
    const first = await deepCursor(filter, offset);
    // Each page starts where the one before ended, and carries no total_items.
    results.deep[label] = await timeRequests(
      port,
      seed.big_key,
      n,
      (i, previous) => `/logs?size=20&start=${previous ? previous.pagination.next : first}${filter ? `&entity_type=${filter}` : ''}`,
      (body) => body.pagination.total_items === undefined,
    );
  }
  await api.stop();
  return results;
}

// ----------------------------------------------------------------------------------------------- export

/** The resident set size of a process, from /proc (Linux). */
function rssOf(pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(require('node:fs').readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

async function exports() {
  const { request } = require('undici');
  const seed = await seedQueryDatabase();
  const results = {};
  // Each export in an api of its own (a clean "before"); the same export of 10x the rows must not need 10x the
  // memory, and one more runs with the api's heap capped far below the size of the download.
  const runs = [
    { label: `ndjson, ${fmt(SIZES.medium)} rows`, key: seed.medium_key, rows: SIZES.medium, format: 'ndjson' },
    { label: `ndjson, ${fmt(SIZES.big)} rows`, key: seed.big_key, rows: SIZES.big, format: 'ndjson' },
    { label: `csv, ${fmt(SIZES.big)} rows`, key: seed.big_key, rows: SIZES.big, format: 'csv' },
    { label: `ndjson, ${fmt(SIZES.big)} rows, heap capped at 96 MiB`, key: seed.big_key, rows: SIZES.big, format: 'ndjson', heapMb: 96 },
  ];
  for (const run of runs) {
    const port = await freePort();
    const api = startApi(QUERY_DB, port, 'on', run.heapMb ? { NODE_OPTIONS: `--max-old-space-size=${run.heapMb}` } : {});
    await api.started;
    phase(`export: ${run.label}; the api's RSS sampled every 50 ms`);
    const before = rssOf(api.child.pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(api.child.pid))), 50);
    const started = performance.now();
    const res = await request(`http://127.0.0.1:${port}/logs/export?format=${run.format}`, {
      headers: { 'svc-api-key': run.key },
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    if (res.statusCode !== 200) throw new Error(`export: ${res.statusCode} ${await res.body.text()}`);
    let lines = 0;
    let bytes = 0;
    const barStarted = Date.now();
    for await (const chunk of res.body) {
      bytes += chunk.length;
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines += 1;
      if (lines % 50_000 < 200) bar(`export ${run.format}`, lines, run.rows, barStarted);
    }
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const rows = run.format === 'csv' ? lines - 1 : lines;
    bar(`export ${run.format}`, rows, rows, barStarted);
    await api.stop();
    if (rows !== run.rows) throw new Error(`export ${run.label}: ${rows} rows, expected ${run.rows}`);
    results[run.label] = { rows, seconds, bytes, before, peak };
  }
  return results;
}

// ----------------------------------------------------------------------------------------------- report

// ---------------------------------------------------------------------------------------------- streams

/**
 * A log stream's throughput: an `https` stream (Standard Webhooks signatures, batches of 1000) from the worker to a
 * local HTTPS receiver that parses every batch, over logs already committed in one tenant's chain, beside the raw
 * multi-row INSERT of the same rows in the same run (the reference).
 */
async function streamThroughput() {
  const { execFileSync } = require('node:child_process');
  const { mkdtempSync, readFileSync, writeFileSync } = require('node:fs');
  const https = require('node:https');
  const n = QUICK ? 20_000 : 100_000;
  const db = 'gatehouse_bench_streams';
  phase(`streams: ${fmt(n)} logs of one tenant to a local HTTPS receiver, database ${db}`);
  await recreateDatabase(db);
  await migrate(db);
  const url = databaseUrl(db);
  const tenant = tenantIn(db, 'streams');
  const entries = withPositions(makeEntries(n).map((e) => ({ ...e, tenant_id: tenant.id })));
  const raw = await rawInsert(url, entries);
  await sql(url, (c) =>
    c.query(`INSERT INTO log_chains (tenant_id, seq, hash) VALUES ($1, $2, '\\x00'::bytea) ON CONFLICT (tenant_id) DO UPDATE SET seq = $2`, [tenant.id, n]),
  );

  const dir = mkdtempSync(path.join(require('node:os').tmpdir(), 'bench-stream-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'key.pem',
      '-out',
      'cert.pem',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { cwd: dir, stdio: 'pipe' },
  );
  const cert = readFileSync(path.join(dir, 'cert.pem'), 'utf8');
  let received = 0;
  const server = https.createServer({ key: readFileSync(path.join(dir, 'key.pem')), cert }, (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received += JSON.parse(Buffer.concat(chunks).toString()).data.records.length;
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  writeFileSync(path.join(dir, 'ca.pem'), cert);

  const port = await freePort();
  const api = startApi(db, port, 'on', { PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8' });
  await api.started;
  const res = await fetch(`http://127.0.0.1:${port}/logs/streams`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'svc-api-key': tenant.key },
    body: JSON.stringify({
      name: 'bench',
      kind: 'https',
      start: 'beginning',
      settings: { url: `https://127.0.0.1:${server.address().port}/hook`, batch_size: 1000, tls_ca: cert },
    }),
  });
  if (res.status !== 201) throw new Error(`stream not created: ${res.status} ${await res.text()}`);
  await api.stop();
  const worker = startProcess(
    'dist/apps/worker/src/main.js',
    [],
    {
      DATABASE_URL: url,
      REDIS_URL,
      QUEUE_PREFIX: `bench-streams-${process.pid}`,
      LOG_LEVEL: 'info',
      PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
      LOG_STREAM_INTERVAL_MS: '100',
    },
    /gatehouse worker running/,
  );
  await worker.started;
  const started = performance.now();
  while (received < n) {
    bar('streaming', received, n, Date.now() - (performance.now() - started));
    await sleep(20);
    if (performance.now() - started > 120_000) break;
  }
  const seconds = (performance.now() - started) / 1000;
  await worker.stop();
  server.close();
  await deleteKeys(`bench-streams-${process.pid}`);
  return { raw: raw.rate, rate: received / seconds, received, n };
}

async function main() {
  if (process.argv.includes('--serve-api')) return serveApi();
  const started = Date.now();
  const loadStart = loadAverage();
  stderr(`audit-log benchmark${QUICK ? ' (quick)' : ''}: node ${process.version}, ${require('node:os').availableParallelism()} cores`);
  // BENCH_ONLY=ingestion|writes|queries|export|streams runs one part (the table then shows only its rows).
  const only = process.env.BENCH_ONLY;
  const ingest = !only || only === 'ingestion' ? await ingestion() : undefined;
  const writes = !only || only === 'writes' ? await writeOverhead() : undefined;
  const query = !only || only === 'queries' ? await queries() : { first: {}, firstBig: {}, deep: {} };
  const exported = !only || only === 'export' ? await exports() : {};
  const streamed = !only || only === 'streams' ? await streamThroughput() : undefined;
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
        'worker, audit-log-batch jobs (500 logs)',
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
  if (streamed) {
    rows.push(
      ['Log stream', `raw multi-row INSERT of the same ${fmt(streamed.n)} rows`, `${fmt(Math.round(streamed.raw))} logs/s`, ''],
      [
        '',
        'https stream to a local HTTPS receiver (batches of 1000)',
        `${fmt(Math.round(streamed.rate))} logs/s`,
        `>= 20k logs/s: ${streamed.rate >= 20_000 ? 'met' : 'MISSED'}`,
      ],
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
