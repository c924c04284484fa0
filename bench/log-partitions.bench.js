'use strict';
// The time partitions' migration on an existing installation: `npm run bench:log-partitions` (BENCH_SEED_SECONDS,
// default 120: as many logs as the seed writes in that time). Seeds the unpartitioned logs table of a fresh database
// `gatehouse_bench_partitions`, then applies the migration while a writer inserts a log every 10 ms and a reader reads
// a first page every 10 ms, and a watcher polls pg_locks every 2 ms. Reports the longest time the table's ACCESS
// EXCLUSIVE lock was seen held, and the slowest insert and read meanwhile. Progress on stderr, figures on stdout.
const { randomUUID } = require('node:crypto');
const { Client } = require('pg');
const { bar, fmt, phase } = require('./progress-bar');
const { migrate, unpartitionLogs, withoutLogIndexes } = require('./log-seed');
const { databaseUrl, recreateDatabase } = require('./service');

const DB = 'gatehouse_bench_partitions';
const SEED_SECONDS = Number(process.env.BENCH_SEED_SECONDS ?? 120);
const CHUNK = 100_000;
const TENANTS = Array.from({ length: 100 }, () => randomUUID());

async function connect() {
  const client = new Client({ connectionString: databaseUrl(DB) });
  await client.connect();
  return client;
}

/** As many logs as fit in SEED_SECONDS, spread over 2025, indexes dropped during the load and built after. */
async function seed(c) {
  await c.query('SET synchronous_commit = off');
  await c.query("SET maintenance_work_mem = '512MB'");
  const buildIndexes = await withoutLogIndexes(c);
  const started = Date.now();
  let rows = 0;
  for (let chunk = 0; Date.now() - started < SEED_SECONDS * 1000; chunk++) {
    await c.query(
      `INSERT INTO logs (id, tenant_id, actor_type, entity_type, entity_id, operation, message, created_at, seq, hash)
       SELECT gen_random_uuid(), ($1::uuid[])[1 + g % 100], 'system', 'token', 'ent_' || (g % 5000), 'read',
              'Entity ent_' || (g % 5000) || ' read (seeded row ' || g || ')',
              timestamptz '2025-01-01T00:00:00Z' + (g % 31536000) * interval '1 second', g / 100 + 1, sha256(convert_to(g::text, 'UTF8'))
       FROM generate_series($2::int, $3::int) AS g`,
      [TENANTS, chunk * CHUNK, (chunk + 1) * CHUNK - 1],
    );
    rows += CHUNK;
    bar(`seeding logs (${fmt(rows)})`, Math.min(Math.round((Date.now() - started) / 1000), SEED_SECONDS), SEED_SECONDS, started);
  }
  await buildIndexes();
  await c.query('INSERT INTO log_chains (tenant_id, seq, hash) SELECT DISTINCT ON (tenant_id) tenant_id, seq, hash FROM logs ORDER BY tenant_id, seq DESC');
  await c.query('VACUUM (ANALYZE) logs');
  return { rows, seconds: (Date.now() - started) / 1000 };
}

/** Runs `probe` every `everyMs` until stopped; the slowest run and how many ran. Runs over 100 ms go to stderr. */
function every(everyMs, probe, label = '') {
  let stopped = false;
  let slowest = 0;
  let runs = 0;
  const done = (async () => {
    while (!stopped) {
      const t = process.hrtime.bigint();
      await probe();
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      if (label && ms > 100) process.stderr.write(`  ${new Date().toISOString()} slow ${label}: ${ms.toFixed(0)} ms\n`);
      slowest = Math.max(slowest, ms);
      runs += 1;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return async () => {
    stopped = true;
    await done;
    return { slowest, runs };
  };
}

async function main() {
  phase(`database ${DB}: migrated, the logs table unpartitioned as before the partitions' migration`);
  await recreateDatabase(DB);
  await migrate(DB);
  await unpartitionLogs(DB);
  const seeder = await connect();
  phase(`seeding for ${SEED_SECONDS} s`);
  const seeded = await seed(seeder);
  const [{ oid, size }] = (await seeder.query("SELECT 'logs'::regclass::oid AS oid, pg_size_pretty(pg_total_relation_size('logs')) AS size")).rows;
  await seeder.end();

  phase(`migrating ${fmt(seeded.rows)} logs (${size} with indexes) while a writer and a reader probe every 10 ms`);
  const [writer, reader, watcher] = await Promise.all([connect(), connect(), connect()]);
  const probeTenant = randomUUID();
  let seq = 0;
  // Without ON CONFLICT: the plain insert works on both schemas (the probe's ids are not claimed in log_ids).
  const stopWriter = every(
    10,
    () =>
      writer.query(
        `INSERT INTO logs (id, tenant_id, actor_type, entity_type, entity_id, operation, message, created_at, seq, hash)
       VALUES ($1, $2, 'system', 'token', 'probe', 'read', 'probe', now(), $3, '\\x00')`,
        [randomUUID(), probeTenant, ++seq],
      ),
    'insert',
  );
  const stopReader = every(
    10,
    () => reader.query('SELECT id FROM logs WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC LIMIT 50', [TENANTS[0]]),
    'first page',
  );
  let held = 0;
  let longest = 0;
  let since;
  const stopWatcher = every(2, async () => {
    const { rowCount } = await watcher.query("SELECT 1 FROM pg_locks WHERE relation = $1 AND mode = 'AccessExclusiveLock' AND granted", [oid]);
    const now = Date.now();
    if (rowCount > 0) since ??= now;
    else if (since !== undefined) {
      process.stderr.write(`  ${new Date().toISOString()} ACCESS EXCLUSIVE on logs released after ${now - since} ms\n`);
      held += 1;
      longest = Math.max(longest, now - since);
      since = undefined;
    }
  });
  const started = Date.now();
  process.stderr.write(`  ${new Date().toISOString()} migration starts\n`);
  const applied = await migrate(DB);
  process.stderr.write(`  ${new Date().toISOString()} migration done\n`);
  const seconds = (Date.now() - started) / 1000;
  await new Promise((resolve) => setTimeout(resolve, 200));
  const [w, r] = [await stopWriter(), await stopReader()];
  await stopWatcher();
  const [{ partitions }] = (await watcher.query('SELECT count(*)::int AS partitions FROM log_partitions()')).rows;
  await Promise.all([writer.end(), reader.end(), watcher.end()]);

  process.stdout.write(`\n| Measure | Figure |\n| --- | --- |\n`);
  const row = (m, f) => process.stdout.write(`| ${m} | ${f} |\n`);
  row('logs seeded (unpartitioned)', `${fmt(seeded.rows)} in ${seeded.seconds.toFixed(0)} s, ${size} with indexes`);
  row('migration applied', `${applied.join(', ')}: ${seconds.toFixed(1)} s in all, online`);
  row('ACCESS EXCLUSIVE on logs, longest hold seen', `${longest} ms (${held} time(s); polled every 2 ms)`);
  row('slowest probe insert during the migration', `${w.slowest.toFixed(0)} ms (${w.runs} inserts)`);
  row('slowest probe first page during the migration', `${r.slowest.toFixed(0)} ms (${r.runs} reads)`);
  row('partitions after', String(partitions));
  process.stdout.write(
    `load average: ${require('node:os')
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')}\n`,
  );
}

const mode = process.argv.includes('--queries')
  ? require('./log-partitions/queries').queries
  : process.argv.includes('--retention')
    ? require('./log-partitions/retention').retention
    : main;
mode().catch((error) => {
  process.stderr.write(`\nbench failed: ${error.stack ?? error}\n`);
  process.exit(1);
});
