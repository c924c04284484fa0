'use strict';
// `npm run bench:log-partitions -- --queries [--quick] [--reuse]`: keyset pages of a tenant of BENCH_LOG_ROWS / 50
// logs (1M of the default 50M; --quick: 2M) in monthly partitions, through the API over HTTP, beside the same page
// query in SQL on the partitioned table and on an unpartitioned copy of that tenant's logs; and the plan of a
// date-range first page, asserted to read only the partitions of its range. The seed is SQL (generate_series, in
// chunks): placeholder hashes, so the chains do not verify (a query bench reads, it does not verify). The database
// (gatehouse_bench_log_scale[_quick]) is kept: --reuse skips the seed when it holds the same number of rows.
const { randomUUID } = require('node:crypto');
const path = require('node:path');
const { bar, fmt, phase } = require('../progress-bar');
const { ROOT, createTenant, databaseUrl, startGatehouse } = require('../service');
const {
  QUICK,
  REUSE,
  dist,
  connect,
  databaseExists,
  monthStart,
  partitionedDatabase,
  withoutParentIndexes,
  lowerPriority,
  latencyStats,
  ms,
  table,
  tableSize,
} = require('./common');

const DB = QUICK ? 'gatehouse_bench_log_scale_quick' : 'gatehouse_bench_log_scale';
const ROWS = Number(process.env.BENCH_LOG_ROWS ?? (QUICK ? 2_000_000 : 50_000_000));
const TENANTS = 50; // the measured tenant holds ROWS / TENANTS: 1M of 50M
const MONTHS = 24;
const CHUNK = 500_000;
const SIZE = Number(process.env.BENCH_PAGE_SIZE ?? 20); // logs a page: GET /logs's default
const STARTS = QUICK ? 20 : 40; // random cursors into the tenant's logs, each followed for PAGES pages
const PAGES = 5;

async function reusable() {
  if (!REUSE || !(await databaseExists(DB))) return undefined;
  const c = await connect(DB);
  try {
    if (!(await c.query("SELECT to_regclass('bench_seed') AS t")).rows[0].t) return undefined;
    return (await c.query('SELECT * FROM bench_seed WHERE rows = $1', [ROWS])).rows[0];
  } finally {
    await c.end();
  }
}

async function seed() {
  phase(`database ${DB}: migrated, ${MONTHS} monthly partitions back from now`);
  const partitions = await partitionedDatabase(DB, MONTHS);
  const created = createTenant({ DATABASE_URL: databaseUrl(DB), REDIS_URL: '' }, 'bench-log-scale');
  const tenant = created.tenant.id;
  const tenants = [tenant, ...Array.from({ length: TENANTS - 1 }, () => randomUUID())];
  const c = await connect(DB);
  const niced = lowerPriority((await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
  await c.query('SET synchronous_commit = off');
  await c.query("SET maintenance_work_mem = '512MB'");
  const from = monthStart(MONTHS).getTime();
  const stepMs = (Date.now() - 3_600_000 - from) / ROWS;
  phase(`seeding ${fmt(ROWS)} logs (${TENANTS} tenants of ${fmt(ROWS / TENANTS)}) over ${partitions} partitions${niced ? ', backend niced' : ''}`);
  const started = Date.now();
  await withoutParentIndexes(c, async () => {
    for (let lo = 0; lo < ROWS; lo += CHUNK) {
      const hi = Math.min(ROWS, lo + CHUNK) - 1;
      await c.query(
        `INSERT INTO logs (id, tenant_id, actor_id, actor_type, entity_type, entity_id, operation, message, created_at, seq, hash)
         SELECT gen_random_uuid(), ($1::uuid[])[1 + g % ${TENANTS}], NULL, 'system',
                (ARRAY['application','bank','card','proxy','reactor','tenant','token'])[1 + g % 7], 'ent_' || (g % 5000),
                (ARRAY['create','update','delete','read'])[1 + g % 4], 'Entity ent_' || (g % 5000) || ' changed (seeded row ' || g || ')',
                date_trunc('milliseconds', to_timestamp(($2::float8 + g * $3::float8) / 1000)), g / ${TENANTS} + 1, '\\x00'
         FROM generate_series($4::bigint, $5::bigint) AS g`,
        [tenants, from, stepMs, lo, hi],
      );
      bar('seeding logs', hi + 1, ROWS, started);
    }
  });
  await c.query(
    'INSERT INTO log_chains (tenant_id, seq, hash) SELECT tenant_id, max(seq), $1::bytea FROM logs GROUP BY tenant_id ON CONFLICT (tenant_id) DO NOTHING',
    [Buffer.alloc(32)],
  );
  phase('vacuum analyze; the reference: the tenant’s logs copied into one unpartitioned table');
  await c.query('VACUUM (ANALYZE) logs');
  await c.query('CREATE TABLE bench_flat (LIKE logs INCLUDING ALL)');
  await c.query('INSERT INTO bench_flat SELECT * FROM logs WHERE tenant_id = $1', [tenant]);
  await c.query('VACUUM (ANALYZE) bench_flat');
  const seconds = Math.round((Date.now() - started) / 1000);
  await c.query('CREATE TABLE bench_seed (rows bigint, tenant uuid, key text, seconds int, seeded_at timestamptz DEFAULT now())');
  await c.query('INSERT INTO bench_seed (rows, tenant, key, seconds) VALUES ($1, $2, $3, $4)', [ROWS, tenant, created.application.key, seconds]);
  await c.end();
  return { rows: ROWS, tenant, key: created.application.key, seconds, seeded_at: new Date() };
}

/** The SQL the API runs for a page (TypeormLogRepository.list's page query, from dist/), with its parameters. */
function pageQuery(em, tenantId, filter, page) {
  const { TypeormLogRepository, applyKeysetPage } = dist('persistence');
  const { STORED_LOG_COLUMNS } = require(path.join(ROOT, 'dist/libs/persistence/src/repositories/log-rows'));
  // `matching` is the repository's own filter (private in TypeScript): the same WHERE as GET /logs.
  return applyKeysetPage(new TypeormLogRepository(em).matching(tenantId, filter).select(STORED_LOG_COLUMNS), 'l', page).getQueryAndParameters();
}

async function timed(fn) {
  const t = performance.now();
  const out = await fn();
  return [performance.now() - t, out];
}

/** The names of the partitions a plan reads. */
function partitionsOf(planText) {
  return [...new Set(planText.match(/logs_p\d{8}/g) ?? [])];
}

async function measure(seeded) {
  const { openDatabase } = dist('persistence');
  const { encodeCursor } = dist('domain');
  const c = await connect(DB);
  const database = await openDatabase({ url: databaseUrl(DB), dataDir: '' });
  const em = database.dataSource.manager;
  const size = await tableSize(c);
  const tenantRows = Math.floor(ROWS / TENANTS);
  const api = await startGatehouse({ DATABASE_URL: databaseUrl(DB), REDIS_URL: '', LOG_LEVEL: 'warn' });
  const get = async (p) => {
    const res = await fetch(`${api.base}${p}`, { headers: { 'svc-api-key': seeded.key } });
    const body = await res.json();
    if (res.status !== 200) throw new Error(`${p}: ${res.status} ${JSON.stringify(body)}`);
    return body;
  };
  try {
    phase('warm-up: 20 first pages');
    for (let i = 0; i < 20; i++) await get(`/logs?size=${SIZE}`);
    // Random depths in the tenant's chain: a position's (created_at, id) is the cursor a page would have ended at.
    const positions = Array.from({ length: STARTS }, () => 1 + Math.floor(Math.random() * (tenantRows - SIZE * PAGES)));
    const cursors = (await c.query('SELECT created_at, id FROM logs WHERE tenant_id = $1 AND seq = ANY($2::bigint[])', [seeded.tenant, positions])).rows.map(
      (r) => encodeCursor({ createdAt: r.created_at, id: r.id }),
    );
    phase(`keyset pages through the API: ${cursors.length} random cursors x ${PAGES} pages of ${SIZE}`);
    const apiPages = [];
    const started = Date.now();
    for (const [i, first] of cursors.entries()) {
      let start = first;
      for (let p = 0; p < PAGES && start; p++) {
        const [t, body] = await timed(() => get(`/logs?size=${SIZE}&start=${start}`));
        if (body.pagination.total_items !== undefined || body.data.length !== SIZE) throw new Error('a keyset page without its rows, or with a count');
        apiPages.push(t);
        start = body.pagination.next;
      }
      bar('keyset pages (API)', i + 1, cursors.length, started);
    }
    phase('the same page queries in SQL: partitioned table vs the unpartitioned copy of the tenant (reference)');
    const sqlPart = [];
    const sqlFlat = [];
    for (const start of cursors) {
      const [query, params] = pageQuery(em, seeded.tenant, {}, { page: 1, size: SIZE, start });
      sqlPart.push((await timed(() => c.query(query, params)))[0]);
      sqlFlat.push((await timed(() => c.query(query.replace(/FROM "logs" "l"/, 'FROM "bench_flat" "l"'), params)))[0]);
    }
    phase('first pages (with total_items: the count of the tenant’s logs), for reference');
    const firstPages = [];
    for (let i = 0; i < 10; i++) firstPages.push((await timed(() => get(`/logs?size=${SIZE}`)))[0]);

    // A date range across two months, in the middle of the data: its first page, and the plan of its page query.
    const rangeFrom = new Date(monthStart(7).getTime() + 15 * 86_400_000);
    const rangeTo = new Date(monthStart(6).getTime() + 10 * 86_400_000);
    const range = `start_date=${rangeFrom.toISOString()}&end_date=${rangeTo.toISOString()}`;
    phase(`date-range first pages through the API (${rangeFrom.toISOString()} to ${rangeTo.toISOString()})`);
    const rangePages = [];
    for (let i = 0; i < 20; i++) rangePages.push((await timed(() => get(`/logs?size=${SIZE}&${range}`)))[0]);
    const [query, params] = pageQuery(em, seeded.tenant, { startDate: rangeFrom, endDate: rangeTo }, { page: 1, size: SIZE });
    const plan = (await c.query(`EXPLAIN (ANALYZE, BUFFERS) ${query}`, params)).rows.map((r) => r['QUERY PLAN']).join('\n');
    const all = (await c.query('SELECT name, from_at, to_at FROM log_partitions()')).rows;
    const inRange = all.filter((p) => (p.from_at === null || p.from_at < rangeTo) && p.to_at > rangeFrom).map((p) => p.name);
    const read = partitionsOf(plan);
    process.stdout.write(`\nEXPLAIN (ANALYZE, BUFFERS) of the date-range first page (GET /logs?${range}&size=${SIZE}):\n${plan}\n`);
    const outside = read.filter((name) => !inRange.includes(name));
    if (read.length === 0 || outside.length > 0)
      throw new Error(`the date-range page reads partitions outside its range: ${outside.join(', ')} (range: ${inRange.join(', ')})`);

    const a = latencyStats(apiPages);
    const p = latencyStats(sqlPart);
    const f = latencyStats(sqlFlat);
    const fp = latencyStats(firstPages);
    const rp = latencyStats(rangePages);
    table([
      ['logs', `${fmt(ROWS)} in ${all.length} partitions (${size} with indexes), seeded ${seeded.seeded_at.toISOString()} in ${seeded.seconds} s`],
      [
        `keyset pages (${SIZE} logs) of the ${fmt(tenantRows)}-log tenant, API over HTTP`,
        `p50 ${ms(a.p50)}, **p95 ${ms(a.p95)}**, p99 ${ms(a.p99)} (${a.n} pages)`,
      ],
      ['the same page query, SQL, partitioned table', `p50 ${ms(p.p50)}, p95 ${ms(p.p95)} (${p.n})`],
      [`the same page query, SQL, unpartitioned copy (${fmt(tenantRows)} logs; reference)`, `p50 ${ms(f.p50)}, p95 ${ms(f.p95)} (${f.n})`],
      ['first page with total_items (count of the tenant), API (reference)', `p50 ${ms(fp.p50)}, p95 ${ms(fp.p95)} (${fp.n})`],
      ['date-range first page with total_items, API', `p50 ${ms(rp.p50)}, p95 ${ms(rp.p95)} (${rp.n})`],
      ['partitions the date-range page reads (asserted: none outside the range)', `${read.join(', ')} of ${all.length}; in range: ${inRange.join(', ')}`],
    ]);
    process.stdout.write(a.p95 <= 20 ? 'bar met: keyset p95 <= 20 ms\n' : `bar NOT met: keyset p95 ${ms(a.p95)} > 20 ms\n`);
  } finally {
    api.child.kill();
    await database.close();
    await c.end();
  }
}

async function queries() {
  const reused = await reusable();
  if (reused) phase(`reusing ${DB} (${fmt(Number(reused.rows))} logs, seeded ${reused.seeded_at.toISOString()})`);
  await measure(reused ?? (await seed()));
}

module.exports = { queries };
