'use strict';
// npm run bench:auth — the cost of authentication: an authenticated GET /applications/{id} beside the bare
// /health/live of the same process, over real PostgreSQL on loopback, measured in one run; then the same
// authenticated route on a second process configured with Redis (cache versions and rate limits there), for an
// application without a rate limit and for one with a rate limit (never exhausted: counted from leases, see
// RedisRateCounter).
const { randomUUID } = require('node:crypto');
const Redis = require('ioredis');
const { interleavedRounds, load, summarize } = require('./load');
const { cpuMs, createTenant, databaseUrl, fmt, recreateDatabase, startGatehouse } = require('./service');

const DB = 'gatehouse_bench_auth';
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 10_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14';

async function createTarget(base, key, body) {
  const res = await fetch(`${base}/applications`, {
    method: 'POST',
    headers: { 'svc-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'private', permissions: ['token:read'], ...body }),
  });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${await res.text()}`);
  return res.json();
}

async function main() {
  await recreateDatabase(DB);
  const env = { DATABASE_URL: databaseUrl(DB), LOG_LEVEL: 'warn', REDIS_URL: '' };
  const key = createTenant(env).application.key;
  const api = await startGatehouse(env);
  // Its own key prefix, so the bench's counters never meet anything else on that Redis.
  const redisApi = await startGatehouse({ ...env, REDIS_URL, QUEUE_PREFIX: `bench-${randomUUID()}` });
  const target = await createTarget(api.base, key, { name: 'bench target' });
  // A limit the run never reaches (1,000,000 a minute), so every request pays for the count and none is refused.
  const limited = await createTarget(redisApi.base, key, {
    name: 'bench limited',
    type: 'management',
    permissions: ['application:read'],
    rate_limit: { limit: 1_000_000, window_seconds: 60 },
  });

  const routes = {
    bare: { url: api.base, path: '/health/live', pid: api.child.pid },
    auth: { url: api.base, path: `/applications/${target.id}`, headers: { 'svc-api-key': key }, pid: api.child.pid },
    redis: { url: redisApi.base, path: `/applications/${target.id}`, headers: { 'svc-api-key': key }, pid: redisApi.child.pid },
    limited: { url: redisApi.base, path: `/applications/${target.id}`, headers: { 'svc-api-key': limited.key }, pid: redisApi.child.pid },
  };
  const names = Object.keys(routes);
  const redisPid = await localRedisPid(REDIS_URL);
  const results = await interleavedRounds(names, ROUNDS, async (name) => {
    // The server's own CPU per request (over the warm-up too): unlike throughput, barely moved by what else the
    // machine runs. Redis's own CPU is not in it: it has a column of its own (when Redis runs on this machine).
    const { pid, ...route } = routes[name];
    const before = cpuMs(pid);
    const redisBefore = redisPid === undefined ? undefined : cpuMs(redisPid);
    const run = await load({ ...route, connections: CONNECTIONS, durationMs: DURATION_MS });
    const requests = run.requests + run.warmupRequests;
    run.cpuUsPerRequest = before === undefined ? NaN : ((cpuMs(pid) - before) * 1000) / requests;
    // Redis's own CPU over the same run (anything else using that Redis meanwhile is in it too).
    run.redisCpuUsPerRequest = redisBefore === undefined ? NaN : ((cpuMs(redisPid) - redisBefore) * 1000) / requests;
    return run;
  });
  api.child.kill('SIGTERM');
  redisApi.child.kill('SIGTERM');

  const s = Object.fromEntries(names.map((name) => [name, summarize(results[name])]));
  const ratio = s.auth.rps / s.bare.rps;
  const limitedRatio = s.limited.rps / s.bare.rps;
  const added = s.auth.p50 - s.bare.p50;
  const row = (label, r) =>
    `| ${label} | ${fmt(r.rps, 0)} | ${fmt((r.rps / s.bare.rps) * 100, 1)}% | ${fmt(r.p50, 3)} | ${fmt(r.p99, 3)} | ${fmt(r.cpu, 0)} | ${fmt(r.redisCpu, 1)} | ${r.errors} |`;
  console.log(
    `\nbench:auth  ${ROUNDS} interleaved rounds x ${DURATION_MS / 1000}s, ${CONNECTIONS} connections, loopback, PostgreSQL ${DB}, Redis ${REDIS_URL}`,
  );
  console.log('| route | req/s | of bare | p50 ms | p99 ms | server CPU µs/req | Redis CPU µs/req | errors |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  console.log(row('GET /health/live (reference, no auth)', s.bare));
  console.log(row('GET /applications/{id} (SVC-API-KEY), no Redis', s.auth));
  console.log(row('GET /applications/{id}, Redis configured, no rate limit', s.redis));
  console.log(row('GET /applications/{id}, Redis configured, rate limit on', s.limited));
  console.log('');
  console.log(`| target | measured | met |`);
  console.log('|---|---:|:-:|');
  console.log(`| authenticated throughput >= 60% of bare | ${fmt(ratio * 100, 1)}% | ${ratio >= 0.6 ? 'yes' : 'NO'} |`);
  console.log(`| authentication adds <= 0.5 ms to p50 | ${fmt(added, 3)} ms | ${added <= 0.5 ? 'yes' : 'NO'} |`);
  console.log(`| with rate limits on (Redis) >= 60% of bare | ${fmt(limitedRatio * 100, 1)}% | ${limitedRatio >= 0.6 ? 'yes' : 'NO'} |`);
}

/** The process id of the Redis server when it runs on this machine (INFO server's process_id), else undefined. */
async function localRedisPid(url) {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await redis.connect();
    const pid = Number(/^process_id:(\d+)/m.exec(await redis.info('server'))?.[1]);
    return Number.isInteger(pid) && cpuMs(pid) !== undefined ? pid : undefined;
  } catch {
    return undefined;
  } finally {
    redis.disconnect();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
