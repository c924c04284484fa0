'use strict';
// What the parts of bench/logs.bench.js share: settings, processes, the API server mode, the rows and the raw INSERT reference.
const { spawn } = require('node:child_process');
const { randomBytes, randomUUID } = require('node:crypto');
const path = require('node:path');
const { Client } = require('pg');
const { percentile } = require('../load');
const { ADMIN_URL, ROOT, cpuMs, createTenant, databaseUrl, freePort, recreateDatabase } = require('../service');
const { migrate, unpartitionLogs, withoutLogIndexes } = require('../log-seed');

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

const { bar, fmt, phase, stderr } = require('../progress-bar');
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

function startWorker(database, prefix = 'bench', env = {}) {
  return startProcess(
    'dist/apps/worker/src/main.js',
    [],
    { DATABASE_URL: databaseUrl(database), REDIS_URL, QUEUE_PREFIX: prefix, LOG_LEVEL: 'info', ...env },
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

// ------------------------------------------------------------------------------------------------- CPU

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

// What the parts use (logs.bench.js, queries.js, streams.js).
module.exports = {
  ...{ Client, percentile, ADMIN_URL, cpuMs, databaseUrl, freePort, recreateDatabase, migrate, unpartitionLogs, withoutLogIndexes },
  ...{ bar, fmt, phase, stderr, QUICK, REDIS_URL, SIZES, QUERY_DB, SEED_VERSION, ENTITY_TYPES, loadAverage, sleep, sql },
  ...{ startApi, startWorker, serveApi, tenantIn, deleteKeys, makeEntries, withPositions, rawInsert, cpuByPid, cpuSinceMs, backendsOf },
};
