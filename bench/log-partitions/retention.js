'use strict';
// `npm run bench:log-partitions -- --retention [--quick]`: ingestion latency (each write through the worker's
// LogBatchWriter and IngestLogs, its default batching) with retention idle, then while ApplyLogRetention removes
// BENCH_RETENTION_LOGS (10M; --quick: 200k) old logs of one tenant, run back to back until none is left (the worker
// runs it every 10 minutes: this is the busiest it can be), then idle again. Both in this one process, as in a worker.
// The old logs are seeded in SQL with placeholder hashes (retention signs an anchor over the stored hash, it does not
// verify). The database (gatehouse_bench_log_retention[_quick]) is recreated each run: retention consumes it.
const { generateKeyPairSync, randomUUID } = require('node:crypto');
const { bar, fmt, phase } = require('../progress-bar');
const { databaseUrl } = require('../service');
const {
  QUICK,
  dist,
  connect,
  monthStart,
  partitionedDatabase,
  insertTenant,
  withoutParentIndexes,
  lowerPriority,
  latencyStats,
  ms,
  table,
  tableSize,
} = require('./common');

const DB = QUICK ? 'gatehouse_bench_log_retention_quick' : 'gatehouse_bench_log_retention';
const OLD = Number(process.env.BENCH_RETENTION_LOGS ?? (QUICK ? 200_000 : 10_000_000));
const MONTHS = 14;
const CHUNK = 500_000;
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? (QUICK ? 15 : 30));
const TICK_MS = 5; // a write of WRITE_LOGS logs every TICK_MS, open loop: 1,000 logs/s
const WRITE_LOGS = 5;
const INGEST_TENANTS = 20;
const BATCH = 5000; // the worker's batch and batches a tenant a run (ApplyLogRetention's defaults)
const BATCHES_PER_RUN = 20;

async function seed() {
  phase(`database ${DB}: migrated, ${MONTHS} monthly partitions back from now`);
  await partitionedDatabase(DB, MONTHS);
  const tenant = randomUUID();
  const c = await connect(DB);
  const niced = lowerPriority((await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
  await c.query('SET synchronous_commit = off');
  await c.query("SET maintenance_work_mem = '512MB'");
  await insertTenant(c, tenant, 'bench-retention', 30);
  // The old logs: positions 1..OLD from MONTHS months ago to 40 days ago, all past the tenant's 30 days.
  const from = monthStart(MONTHS).getTime();
  const stepMs = (Date.now() - 40 * 86_400_000 - from) / OLD;
  phase(`seeding ${fmt(OLD)} old logs of one tenant (retention 30 days)${niced ? ', backend niced' : ''}`);
  const started = Date.now();
  await withoutParentIndexes(c, async () => {
    for (let lo = 0; lo < OLD; lo += CHUNK) {
      const hi = Math.min(OLD, lo + CHUNK) - 1;
      await c.query(
        `INSERT INTO logs (id, tenant_id, actor_type, entity_type, entity_id, operation, message, created_at, seq, hash)
         SELECT gen_random_uuid(), $1, 'system', 'token', 'ent_' || (g % 5000), 'read', 'Entity ent_' || (g % 5000) || ' read (seeded row ' || g || ')',
                to_timestamp(($2::float8 + g * $3::float8) / 1000), g + 1, sha256(convert_to(g::text, 'UTF8'))
         FROM generate_series($4::bigint, $5::bigint) AS g`,
        [tenant, from, stepMs, lo, hi],
      );
      bar('seeding old logs', hi + 1, OLD, started);
    }
  });
  await c.query('INSERT INTO log_chains (tenant_id, seq, hash) SELECT $1, $2, hash FROM logs WHERE tenant_id = $1 AND seq = $2', [tenant, OLD]);
  phase('vacuum analyze');
  await c.query('VACUUM (ANALYZE) logs');
  const size = await tableSize(c);
  await c.end();
  return { tenant, size, seconds: Math.round((Date.now() - started) / 1000) };
}

/** The worker's pieces, from dist/: its batch writer over IngestLogs, and ApplyLogRetention. */
async function workerParts() {
  const { openDatabase, RepositoryRegistry, TypeormLogChainWriter, TypeormLogRetentionRepository, TypeormUnitOfWork } = dist('persistence');
  const { ApplyLogRetention, CheckpointSigner, IngestLogs, LogRetentionRepository, NoopAuditEventPublisher, SystemClock } = dist('domain');
  const { DEFAULT_LOG_BATCH, LogBatchWriter } = dist('jobs');
  const database = await openDatabase({ url: databaseUrl(DB), dataDir: '' });
  const registry = new RepositoryRegistry().register(LogRetentionRepository, (em) => new TypeormLogRetentionRepository(em));
  // The retention batches' audit logs stay in the outbox (no publisher): the relay is not what is measured.
  const uow = new TypeormUnitOfWork(database.dataSource, registry, new NoopAuditEventPublisher(), new SystemClock());
  const key = generateKeyPairSync('ed25519').privateKey;
  const retention = new ApplyLogRetention(
    uow,
    registry.build(LogRetentionRepository, database.dataSource.manager),
    new CheckpointSigner(() => key),
    new SystemClock(),
  );
  const writer = new LogBatchWriter(new IngestLogs(new TypeormLogChainWriter(database.dataSource.manager)), DEFAULT_LOG_BATCH);
  return { database, retention, writer };
}

/** Writes WRITE_LOGS logs every TICK_MS (open loop) and files each write's latency under the phase it started in. */
function ingest(writer) {
  const tenants = Array.from({ length: INGEST_TENANTS }, () => randomUUID());
  const latencies = {};
  let phaseName = 'warm-up';
  let tick = 0;
  let failed;
  const inFlight = new Set();
  const timer = setInterval(() => {
    const tenantId = tenants[tick++ % tenants.length];
    const logs = Array.from({ length: WRITE_LOGS }, () => ({
      id: randomUUID(),
      tenantId,
      actorId: null,
      actorType: 'system',
      entityType: 'token',
      entityId: 'ent_1',
      operation: 'create',
      message: 'bench write',
      createdAt: new Date(),
    }));
    const name = phaseName;
    const t = performance.now();
    const write = writer.write(logs).then(
      () => (latencies[name] ??= []).push(performance.now() - t),
      (error) => (failed = error),
    );
    inFlight.add(write);
    write.finally(() => inFlight.delete(write));
  }, TICK_MS);
  return {
    phase: (name) => (phaseName = name),
    latencies,
    stop: async () => {
      clearInterval(timer);
      await Promise.all(inFlight);
      if (failed) throw failed;
    },
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function retention() {
  const seeded = await seed();
  const { database, retention: apply, writer } = await workerParts();
  const load = ingest(writer);
  try {
    await sleep(3000);
    phase(`ingestion alone for ${IDLE_SECONDS} s (${(WRITE_LOGS * 1000) / TICK_MS} logs/s in writes of ${WRITE_LOGS}, ${INGEST_TENANTS} tenants)`);
    load.phase('idle before');
    await sleep(IDLE_SECONDS * 1000);
    phase(`ingestion while ApplyLogRetention removes ${fmt(OLD)} logs (batches of ${BATCH}, ${BATCHES_PER_RUN} a run, runs back to back)`);
    load.phase('retention');
    const started = Date.now();
    let removed = 0;
    let slowestRun = 0;
    let runs = 0;
    for (;;) {
      const t = performance.now();
      const n = await apply.execute(BATCH, BATCHES_PER_RUN);
      slowestRun = Math.max(slowestRun, performance.now() - t);
      runs += 1;
      removed += n;
      bar('retention', removed, OLD, started);
      if (n === 0) break;
    }
    const seconds = (Date.now() - started) / 1000;
    phase(`ingestion alone again for ${IDLE_SECONDS} s`);
    load.phase('idle after');
    await sleep(IDLE_SECONDS * 1000);
    load.phase('done');
    await load.stop();
    const c = await connect(DB);
    const [{ left }] = (await c.query('SELECT count(*)::int AS left FROM logs WHERE tenant_id = $1', [seeded.tenant])).rows;
    const [{ anchors }] = (await c.query('SELECT count(*)::int AS anchors FROM log_retention_anchors WHERE tenant_id = $1', [seeded.tenant])).rows;
    await c.end();
    if (removed !== OLD || left !== 0) throw new Error(`retention removed ${removed} of ${OLD} logs (${left} left)`);

    const before = latencyStats(load.latencies['idle before']);
    const during = latencyStats(load.latencies.retention);
    const after = latencyStats(load.latencies['idle after']);
    const idle = latencyStats([...load.latencies['idle before'], ...load.latencies['idle after']]);
    const ratio = during.p99 / idle.p99;
    const row = (s) => `p50 ${ms(s.p50)}, p99 ${ms(s.p99)}, max ${ms(s.max)} (${fmt(s.n)} writes)`;
    table([
      ['old logs seeded (one tenant, 30 days retention)', `${fmt(OLD)} in ${seeded.seconds} s, ${seeded.size} with indexes`],
      [
        'retention',
        `${fmt(removed)} removed in ${seconds.toFixed(0)} s (${fmt(Math.round(removed / seconds))} logs/s), ${anchors} batches/anchors, ${runs} runs; slowest run (${BATCHES_PER_RUN} batches) ${ms(slowestRun)}`,
      ],
      ['ingestion write latency, retention idle (before)', row(before)],
      ['ingestion write latency, during retention', row(during)],
      ['ingestion write latency, retention idle (after)', row(after)],
      ['p99 during retention / p99 idle (before and after)', `**${ratio.toFixed(2)}** (${ms(during.p99)} / ${ms(idle.p99)})`],
    ]);
    process.stdout.write(ratio <= 1.2 ? 'bar met: p99 moved <= 20%\n' : `bar NOT met: p99 moved by ${((ratio - 1) * 100).toFixed(0)}%\n`);
  } finally {
    await load.stop().catch(() => undefined);
    await writer.close();
    await database.close();
  }
}

module.exports = { retention };
