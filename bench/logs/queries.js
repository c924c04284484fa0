'use strict';
// Parts 3 and 4 of bench/logs.bench.js: keyset queries over the seeded 10M-log database, and the export.
const { randomUUID } = require('node:crypto');
const { percentile, ADMIN_URL, databaseUrl, freePort, recreateDatabase, migrate, unpartitionLogs, withoutLogIndexes } = require('./common');
const { bar, fmt, phase, SIZES, QUERY_DB, SEED_VERSION, ENTITY_TYPES, sql, startApi, tenantIn } = require('./common');

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
  // The tenants first: the CLI that creates them applies pending migrations, the partitions' too.
  const big = tenantIn(QUERY_DB, 'bench-big');
  const medium = tenantIn(QUERY_DB, 'bench-medium');
  await unpartitionLogs(QUERY_DB);
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

async function exportRuns() {
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

module.exports = { queries, exportRuns };
