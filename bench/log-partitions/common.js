'use strict';
// What the modes of bench/log-partitions.bench.js share: a bench database laid out in monthly partitions, SQL
// helpers, the figures' table, and the domain and persistence from dist/.
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { Client } = require('pg');
const { percentile } = require('../load');
const { bar } = require('../progress-bar');
const { migrate } = require('../log-seed');
const { ROOT, ADMIN_URL, databaseUrl, recreateDatabase } = require('../service');

const QUICK = process.argv.includes('--quick');
const REUSE = process.argv.includes('--reuse');

const dist = (lib) => require(path.join(ROOT, 'dist/libs', lib, 'src'));

async function connect(db) {
  const client = new Client({ connectionString: databaseUrl(db) });
  await client.connect();
  return client;
}

async function databaseExists(db) {
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    return (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [db])).rowCount > 0;
  } finally {
    await admin.end();
  }
}

async function dropDatabase(db) {
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** The first instant of the month `back` months before the current one (UTC). */
function monthStart(back) {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1));
}

/**
 * A fresh migrated database whose logs are in monthly partitions from `months` months back: as an installation that
 * has run partitioned that long. (A fresh migration attaches an empty `logs_legacy` for everything before next month;
 * it is detached and dropped here, empty, so that the months before are partitions of their own.)
 */
async function partitionedDatabase(db, months) {
  await recreateDatabase(db);
  await migrate(db);
  const c = await connect(db);
  try {
    await c.query('ALTER TABLE logs DETACH PARTITION logs_legacy');
    await c.query('DROP TABLE logs_legacy');
    await c.query("SELECT log_partitions_ensure($1, $2, 'month')", [monthStart(months), monthStart(-3)]);
    return (await c.query('SELECT count(*)::int AS n FROM log_partitions()')).rows[0].n;
  } finally {
    await c.end();
  }
}

/** A tenant row of its own (the retention and query tenants are only rows; the API's tenant comes from the CLI). */
async function insertTenant(c, id, name, retentionDays = null) {
  await c.query('INSERT INTO tenants (id, name, created_at, log_retention_days) VALUES ($1, $2, now(), $3)', [id, name, retentionDays]);
}

/**
 * Runs `load` with the parent's indexes dropped (and with them each partition's), then builds them once over the
 * loaded rows, with progress; the per-partition unique (tenant_id, seq) index stays.
 */
async function withoutParentIndexes(c, load) {
  const indexes = (await c.query("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'logs'")).rows;
  for (const ix of indexes) await c.query(`DROP INDEX "${ix.indexname}"`);
  await load();
  const started = Date.now();
  for (let i = 0; i < indexes.length; i++) {
    bar(`indexing ${i + 1}/${indexes.length}`, i, indexes.length, started);
    // pg_indexes shows a partitioned index `ON ONLY` the parent: without ONLY it is built on every partition.
    await c.query(indexes[i].indexdef.replace(' ON ONLY ', ' ON '));
  }
  bar('indexing', indexes.length, indexes.length, started);
}

/** Renices a (seeding) backend: nice 10, idle I/O class, as the machine is shared. Best effort: false if not allowed. */
function lowerPriority(pid) {
  try {
    execFileSync('renice', ['-n', '10', '-p', String(pid)], { stdio: 'ignore' });
    execFileSync('ionice', ['-c3', '-p', String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const latencyStats = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { n: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN };
};

const ms = (n) => (Number.isFinite(n) ? `${n.toFixed(1)} ms` : 'n/a');

function table(rows) {
  process.stdout.write(`\n| Measure | Figure |\n| --- | --- |\n`);
  for (const [measure, figure] of rows) process.stdout.write(`| ${measure} | ${figure} |\n`);
  process.stdout.write(`load average: ${loadAverage()}\n`);
}

const loadAverage = () =>
  require('node:os')
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');

const tableSize = async (c) =>
  (await c.query(`SELECT pg_size_pretty(sum(pg_total_relation_size(inhrelid))) AS size FROM pg_inherits WHERE inhparent = 'logs'::regclass`)).rows[0].size;

module.exports = {
  QUICK,
  REUSE,
  dist,
  connect,
  databaseExists,
  dropDatabase,
  monthStart,
  partitionedDatabase,
  insertTenant,
  withoutParentIndexes,
  lowerPriority,
  latencyStats,
  ms,
  table,
  loadAverage,
  tableSize,
};
