'use strict';
// npm run bench:tokens — the token vault's cost: POST /tokens (a card: validation, fingerprint, mask, AES-GCM seal,
// insert and its audit row) and GET /tokens/{id} under a `mask` rule (a read, an open, the audit row) beside the
// authenticated GET /applications/{id} of the same process, over real PostgreSQL on loopback, in one run; and a
// proxy call (require_auth, no transform, to a local echo upstream) with one token expression in its JSON body
// (detokenized with the caller's key: a read, an open, the audit row) beside the same call without an expression.
// Targets (issue 24): POST >= 50% and GET (mask) >= 60% of the reference's throughput; the detokenizing proxy call
// >= 70% of the same proxy call without an expression.
const { randomBytes } = require('node:crypto');
const { interleavedRounds, load, summarize } = require('./load');
const {
  cpuMs,
  createTenant,
  databaseCpuMs,
  databaseUrl,
  ECHO_UPSTREAM_SOURCE,
  fmt,
  freePort,
  recreateDatabase,
  startGatehouse,
  startScript,
} = require('./service');

const DB = 'gatehouse_bench_tokens';
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 10_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '123' };

async function call(base, key, method, path, body) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'svc-api-key': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path} failed: ${res.status} ${await res.text()}`);
  return res.json();
}

async function main() {
  await recreateDatabase(DB);
  // A key of the bench's own: nothing is generated into a DATA_DIR.
  const env = {
    DATABASE_URL: databaseUrl(DB),
    LOG_LEVEL: 'warn',
    REDIS_URL: '',
    VAULT_KEY: randomBytes(32).toString('hex'),
    PROXY_ALLOW_HTTP: 'true',
    PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
  };
  const upstreamPort = await freePort();
  const upstream = await startScript(ECHO_UPSTREAM_SOURCE, { PORT: String(upstreamPort) });
  const admin = createTenant(env).application.key;
  const api = await startGatehouse(env);
  // A private application whose plain permissions make it one `mask` rule on `/`.
  const vault = await call(api.base, admin, 'POST', '/applications', {
    name: 'bench vault',
    type: 'private',
    permissions: ['token:create', 'token:read'],
  });
  const token = await call(api.base, vault.key, 'POST', '/tokens', { type: 'card', data: CARD });
  const check = await call(api.base, vault.key, 'GET', `/tokens/${token.id}`);
  if (check.data?.number !== '424242XXXXXX4242') throw new Error('the bench token does not read back masked');
  // An outbound proxy and a caller that may use tokens (reveal on `/`).
  const proxy = await call(api.base, admin, 'POST', '/proxies', {
    name: 'bench outbound',
    destination_url: `http://127.0.0.1:${upstreamPort}/`,
    require_auth: true,
  });
  const caller = await call(api.base, admin, 'POST', '/applications', {
    name: 'bench caller',
    type: 'private',
    permissions: ['proxy:invoke'],
    rules: [{ priority: 1, container: '/', transform: 'reveal', permissions: ['token:use'] }],
  });
  const proxied = (body) => ({
    url: api.base,
    path: '/proxy/payments',
    method: 'POST',
    headers: { 'svc-proxy-key': proxy.key, 'svc-api-key': caller.key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const plainBody = { card_number: CARD.number, amount: 1000, currency: 'usd' };
  const expressionBody = { card_number: `{{ ${token.id} | json: '$.number' }}`, amount: 1000, currency: 'usd' };
  const sent = await fetch(`${api.base}/proxy/payments`, { method: 'POST', headers: proxied(expressionBody).headers, body: proxied(expressionBody).body });
  if ((await sent.json()).card_number !== CARD.number) throw new Error('the bench proxy call was not detokenized');

  const pid = api.child.pid;
  const json = { 'svc-api-key': vault.key, 'content-type': 'application/json' };
  const routes = {
    reference: { url: api.base, path: `/applications/${vault.id}`, headers: { 'svc-api-key': admin } },
    create: { url: api.base, path: '/tokens', method: 'POST', headers: json, body: JSON.stringify({ type: 'card', data: CARD }), expectStatus: 201 },
    read: { url: api.base, path: `/tokens/${token.id}`, headers: { 'svc-api-key': vault.key } },
    proxyPlain: proxied(plainBody),
    proxyDetokenize: proxied(expressionBody),
  };
  // BENCH_ROUTES=read,reference: only those routes (for a profile of one path); the targets need all five.
  const only = process.env.BENCH_ROUTES?.split(',');
  const names = Object.keys(routes).filter((name) => !only || only.includes(name));
  const results = await interleavedRounds(names, ROUNDS, async (name) => {
    const before = cpuMs(pid);
    const databaseBefore = databaseCpuMs();
    const run = await load({ ...routes[name], connections: CONNECTIONS, durationMs: DURATION_MS });
    const requests = run.requests + run.warmupRequests;
    run.cpuUsPerRequest = before === undefined ? NaN : ((cpuMs(pid) - before) * 1000) / requests;
    run.databaseCpuUsPerRequest = databaseBefore === undefined ? NaN : ((databaseCpuMs() - databaseBefore) * 1000) / requests;
    return run;
  });
  api.child.kill('SIGTERM');
  upstream.kill('SIGTERM');

  if (only) {
    for (const name of names) console.log(name, JSON.stringify(summarize(results[name])));
    return;
  }
  const s = Object.fromEntries(names.map((name) => [name, summarize(results[name])]));
  const row = (label, r) =>
    `| ${label} | ${fmt(r.rps, 0)} | ${fmt((r.rps / s.reference.rps) * 100, 1)}% | ${fmt(r.p50, 3)} | ${fmt(r.p99, 3)} | ${fmt(r.cpu, 0)} | ${fmt(r.databaseCpu, 0)} | ${r.errors} |`;
  console.log(`\nbench:tokens  ${ROUNDS} interleaved rounds x ${DURATION_MS / 1000}s, ${CONNECTIONS} connections, loopback, PostgreSQL ${DB}`);
  console.log('| route | req/s | of reference | p50 ms | p99 ms | server CPU µs/req | PostgreSQL CPU µs/req | errors |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  console.log(row('GET /applications/{id} (reference, authenticated)', s.reference));
  console.log(row('POST /tokens (card)', s.create));
  console.log(row('GET /tokens/{id} (mask rule)', s.read));
  console.log(row('POST /proxy, require_auth, no expression', s.proxyPlain));
  console.log(row('POST /proxy, require_auth, one token expression', s.proxyDetokenize));
  const createRatio = s.create.rps / s.reference.rps;
  const readRatio = s.read.rps / s.reference.rps;
  const detokenizeRatio = s.proxyDetokenize.rps / s.proxyPlain.rps;
  console.log('');
  console.log('| target | measured | met |');
  console.log('|---|---:|:-:|');
  console.log(`| POST /tokens >= 50% of the reference | ${fmt(createRatio * 100, 1)}% | ${createRatio >= 0.5 ? 'yes' : 'NO'} |`);
  console.log(`| GET /tokens/{id} (mask) >= 60% of the reference | ${fmt(readRatio * 100, 1)}% | ${readRatio >= 0.6 ? 'yes' : 'NO'} |`);
  console.log(
    `| detokenizing proxy call >= 70% of the same call without an expression | ${fmt(detokenizeRatio * 100, 1)}% | ${detokenizeRatio >= 0.7 ? 'yes' : 'NO'} |`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
