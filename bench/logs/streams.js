'use strict';
// Part 5 of bench/logs.bench.js: an https log stream's throughput to a local receiver.
const {
  databaseUrl,
  freePort,
  recreateDatabase,
  migrate,
  bar,
  fmt,
  phase,
  path,
  QUICK,
  REDIS_URL,
  sleep,
  sql,
  startProcess,
  startApi,
  tenantIn,
  deleteKeys,
  makeEntries,
  withPositions,
  rawInsert,
} = require('./common');

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

module.exports = { streamThroughput };
