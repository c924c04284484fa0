'use strict';
// Part 5 of bench/logs.bench.js: log streams. A local HTTPS receiver, streams created through the API, one stream's
// throughput over committed logs, and the lag of a stream while logs arrive at a steady rate. Also used by the
// ingestion part (two streams active while the worker ingests).
const { execFileSync } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const { mkdtempSync, readFileSync } = require('node:fs');
const https = require('node:https');
const os = require('node:os');
const path = require('node:path');
const { databaseUrl, freePort, recreateDatabase, migrate, bar, fmt, phase, QUICK, REDIS_URL, percentile, sleep, sql } = require('./common');
const { startApi, startWorker, tenantIn, deleteKeys, makeEntries, withPositions, rawInsert } = require('./common');

/** Loopback receivers allowed, as an operator allows a private CIDR for its own SIEM. */
const STREAM_ENV = { PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8' };

function selfSigned() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-stream-'));
  const subject = ['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'];
  const args = ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '1', ...subject];
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  return { key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem'), 'utf8') };
}

/**
 * A local HTTPS receiver (keep-alive) that parses every batch and checks each tenant's positions: `gaps` counts a
 * record whose position is beyond the last + 1, `repeats` one at or below it. `onRecords(records, at)` sees each batch.
 */
async function startReceiver(onRecords = () => undefined) {
  const { key, cert } = selfSigned();
  const last = new Map();
  const receiver = { received: 0, gaps: 0, repeats: 0, requests: 0, connections: 0, cert, url: '' };
  receiver.reset = () => last.clear();
  const server = https.createServer({ key, cert, keepAliveTimeout: 65_000 }, (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const records = JSON.parse(Buffer.concat(chunks).toString()).data.records;
      for (const r of records) {
        const before = last.get(r.tenant_id) ?? 0;
        if (r.position <= before) receiver.repeats += 1;
        else if (r.position !== before + 1) receiver.gaps += 1;
        last.set(r.tenant_id, Math.max(before, r.position));
      }
      receiver.received += records.length;
      receiver.requests += 1;
      onRecords(records, at);
      res.writeHead(204).end();
    });
  });
  server.on('secureConnection', () => (receiver.connections += 1));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `https://127.0.0.1:${server.address().port}/hook`;
  receiver.close = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  };
  return receiver;
}

/** An https stream (batches of 1000, from position 1) per tenant, created through the API as a tenant does. */
async function createStreams(db, tenants, receiver) {
  const port = await freePort();
  const api = startApi(db, port, 'on', STREAM_ENV);
  await api.started;
  try {
    for (const tenant of tenants) {
      const res = await fetch(`http://127.0.0.1:${port}/logs/streams`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'svc-api-key': tenant.key },
        body: JSON.stringify({ name: 'bench', kind: 'https', start: 'beginning', settings: { url: receiver.url, batch_size: 1000, tls_ca: receiver.cert } }),
      });
      if (res.status !== 201) throw new Error(`stream not created: ${res.status} ${await res.text()}`);
    }
  } finally {
    await api.stop();
  }
}

/** Waits until `done()` or `timeoutMs`, drawing the bar `label` from `progress()` (done, total) every 50 ms. */
async function waitFor(label, progress, done, timeoutMs) {
  const started = Date.now();
  while (!done() && Date.now() - started < timeoutMs) {
    bar(label, ...progress(), started);
    await sleep(50);
  }
  bar(label, ...progress(), started);
}

/**
 * One stream's throughput: an `https` stream (Standard Webhooks signatures, batches of 1000) from the worker to a
 * local HTTPS receiver, over logs already committed in one tenant's chain, beside the raw multi-row INSERT of the
 * same rows in the same run (the reference).
 */
async function streamThroughput() {
  const n = QUICK ? 20_000 : 100_000;
  const db = 'gatehouse_bench_streams';
  phase(`streams: throughput, ${fmt(n)} committed logs of one tenant to a local HTTPS receiver, database ${db}`);
  await recreateDatabase(db);
  await migrate(db);
  const url = databaseUrl(db);
  const tenant = tenantIn(db, 'streams');
  const entries = withPositions(makeEntries(n).map((e) => ({ ...e, tenant_id: tenant.id })));
  const raw = await rawInsert(url, entries);
  await sql(url, (c) =>
    c.query(`INSERT INTO log_chains (tenant_id, seq, hash) VALUES ($1, $2, '\\x00'::bytea) ON CONFLICT (tenant_id) DO UPDATE SET seq = $2`, [tenant.id, n]),
  );
  const receiver = await startReceiver();
  await createStreams(db, [tenant], receiver);
  const prefix = `bench-streams-${process.pid}`;
  const worker = startWorker(db, prefix, { ...STREAM_ENV, LOG_STREAM_INTERVAL_MS: '100' });
  await worker.started;
  const started = performance.now();
  await waitFor(
    'streaming',
    () => [receiver.received, n],
    () => receiver.received >= n,
    120_000,
  );
  const seconds = (performance.now() - started) / 1000;
  await worker.stop();
  await receiver.close();
  await deleteKeys(prefix);
  const { received, gaps, repeats, requests, connections } = receiver;
  return { raw: raw.rate, rate: received / seconds, received, n, gaps, repeats, requests, connections };
}

/**
 * A stream's lag while logs arrive steadily: `rate` logs/s for `seconds` go through the worker's queue (jobs of
 * `rate / 10` logs every 100 ms, each log written at the moment it is queued) into a tenant with an https stream; the
 * worker polls streams at its default interval (LOG_STREAM_INTERVAL_MS, 1 s). A log's lag is the time from its
 * `created_at` to its arrival at the receiver (queue, ingestion, the wait for the stream's turn, delivery).
 */
async function streamLag(rate = 5000) {
  const { Queue } = require('bullmq');
  const seconds = QUICK ? 10 : 30;
  const total = rate * seconds;
  const db = 'gatehouse_bench_stream_lag';
  phase(`streams: lag under a steady ${fmt(rate)} logs/s for ${seconds} s (${fmt(total)} logs), database ${db}`);
  await recreateDatabase(db);
  await migrate(db);
  const tenant = tenantIn(db, 'lag');
  const lags = [];
  // The bench's own logs only: the tenant's set-up logs (its creation, the stream's) were written before the stream began.
  const receiver = await startReceiver((records, at) => {
    for (const r of records) if (r.message.startsWith('Benchmark')) lags.push((at - Date.parse(r.created_at)) / 1000);
  });
  await createStreams(db, [tenant], receiver);
  const prefix = `bench-lag-${process.pid}`;
  const worker = startWorker(db, prefix, STREAM_ENV);
  await worker.started;
  const queue = new Queue('audit-logs', { connection: { url: REDIS_URL }, prefix });
  const template = makeEntries(rate / 10).map((e) => ({ ...e, tenant_id: tenant.id }));
  const started = Date.now();
  const opts = { removeOnComplete: true, removeOnFail: false };
  let queued = 0;
  for (let tick = 0; tick < seconds * 10; tick++) {
    await sleep(Math.max(0, started + tick * 100 - Date.now()));
    const now = new Date().toISOString();
    const logs = template.map((e) => ({ ...e, id: randomUUID(), created_at: now }));
    await queue.add('audit-log-batch', { logs }, opts);
    queued += logs.length;
    bar('steady rate (received)', lags.length, total, started);
  }
  const sendSeconds = (Date.now() - started) / 1000;
  await waitFor(
    'draining',
    () => [lags.length, total],
    () => lags.length >= total,
    60_000,
  );
  await queue.close();
  await worker.stop();
  await receiver.close();
  await deleteKeys(prefix);
  const received = lags.length;
  lags.sort((a, b) => a - b);
  const { gaps, repeats } = receiver;
  return { rate, queued, sendSeconds, received, gaps, repeats, p50: percentile(lags, 50), p99: percentile(lags, 99), max: lags[lags.length - 1] ?? NaN };
}

/**
 * Empties the trail (logs, ids, chains, checkpoints) and puts the streams back to its start, in one transaction, once
 * they are idle (caught up, no lease): a stream mid-batch would otherwise acknowledge into the new trail.
 */
async function emptyTrail(url, timeoutMs = 60_000) {
  await sql(url, async (c) => {
    const deadline = Date.now() + timeoutMs;
    const busy = `SELECT count(*)::int AS n FROM log_streams s LEFT JOIN log_chains h ON h.tenant_id = s.tenant_id
      WHERE s.lease_owner IS NOT NULL OR s."position" < coalesce(h.seq, 0)`;
    while ((await c.query(busy)).rows[0].n > 0 && Date.now() < deadline) await sleep(100);
    await c.query('BEGIN');
    await c.query('TRUNCATE logs, log_ids, log_chains, log_checkpoints');
    await c.query(`UPDATE log_streams SET "position" = 0, sent_position = 0, lease_owner = NULL, lease_expires_at = NULL, next_attempt_at = now()`);
    await c.query('COMMIT');
  });
}

module.exports = { STREAM_ENV, startReceiver, createStreams, emptyTrail, streamThroughput, streamLag };
