'use strict';
// An open-loop (fixed-rate) HTTP load generator. Requests leave on a schedule (one every 1/rate s, spread over
// several client workers) whether or not earlier ones have been answered, and each latency is measured from the
// request's scheduled send time, not from when it actually left: a server that stalls cannot make the generator wait
// and so hide its queue (coordinated omission, as wrk2 avoids it).
//
// Threads: one ticker and `workers` senders. libuv's timers have 1 ms resolution, which would send most requests
// up to a millisecond late (and count that as latency); the ticker instead sleeps in Atomics.wait, which wakes within
// tens of microseconds, and hands each due request to a sender by message (a sender's event loop wakes on it at
// once). Senders keep their own keep-alive pool each. The send lag (actual minus scheduled send) is reported, so a
// generator that could not keep up shows instead of passing for server latency.
const { Worker, isMainThread, parentPort, workerData, MessageChannel } = require('node:worker_threads');

/** Milliseconds since `base` (a process.hrtime.bigint() shared by every thread: the monotonic clock). */
const sinceMs = (base) => Number(process.hrtime.bigint() - base) / 1e6;

function ticker({ base, startMs, recordFromMs, intervalMs, total, ports }) {
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  for (const port of ports) port.postMessage({ recordFromMs });
  for (let k = 0; k < total; k++) {
    const scheduled = startMs + k * intervalMs;
    const wait = scheduled - sinceMs(base);
    if (wait > 0) Atomics.wait(sleeper, 0, 0, wait);
    ports[k % ports.length].postMessage(scheduled);
  }
  for (const port of ports) port.postMessage(-1);
}

async function sender({ base, port, request, connections, expectStatus }) {
  const { Pool } = require('undici');
  const pool = new Pool(new URL(request.url).origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const options = { path: request.path, method: request.method, headers: request.headers, body: request.body };
  const latencies = [];
  const lags = [];
  // Requests due but waiting for a free connection (their wait counts as latency), oldest first. Kept here rather
  // than in undici's pool, whose dispatch from a deep queue stalls (connections idle while thousands wait).
  const due = [];
  let waitingMost = 0;
  let errors = 0;
  let running = 0;
  let ended = false;
  let recordFromMs = Infinity;
  const finish = async () => {
    await pool.close();
    const out = { latencies: Float64Array.from(latencies), lags: Float64Array.from(lags), errors, waitingMost };
    parentPort.postMessage(out, [out.latencies.buffer, out.lags.buffer]);
  };
  const settle = (scheduled, ok) => {
    if (scheduled >= recordFromMs) {
      latencies.push(sinceMs(base) - scheduled);
      if (!ok) errors++;
    }
    running--;
    pump();
  };
  const pump = () => {
    while (running < connections && due.length > 0) {
      const scheduled = due.shift();
      running++;
      pool
        .request(options)
        .then(async (res) => {
          await res.body.dump();
          settle(scheduled, res.statusCode === expectStatus);
        })
        .catch(() => settle(scheduled, false));
    }
    if (ended && running === 0) void finish();
  };
  port.on('message', (scheduled) => {
    if (typeof scheduled === 'object') {
      recordFromMs = scheduled.recordFromMs;
    } else if (scheduled < 0) {
      ended = true;
      port.close();
      pump();
    } else {
      if (scheduled >= recordFromMs) lags.push(sinceMs(base) - scheduled);
      due.push(scheduled);
      if (due.length > waitingMost) waitingMost = due.length;
      pump();
    }
  });
  // One request before the first scheduled one: undici compiles its HTTP parser (WebAssembly) on its first connection,
  // which would otherwise stall the first scheduled requests by a fraction of a second.
  await (await pool.request(options)).body.dump();
  parentPort.postMessage('ready');
}

if (!isMainThread) {
  if (workerData.role === 'ticker') ticker(workerData);
  else
    sender(workerData).catch((error) => {
      // Unhandled in the thread: reported to the main thread as the worker's 'error'.
      setImmediate(() => {
        throw error;
      });
    });
}

/**
 * Sends `rate` requests a second for `warmupMs` (default 1 s, not recorded) and `durationMs`, and resolves once every
 * one is answered (or failed).
 * @param {{url: string, path: string, method?: string, headers?: object, body?: string, rate: number,
 *          durationMs: number, warmupMs?: number, workers?: number, connections?: number, expectStatus?: number,
 *          onRecording?: () => void}} o
 *   `connections`: per worker (a request waits in its worker's pool when all are busy, and that wait counts).
 * @returns {Promise<{latencies: Float64Array, lags: Float64Array, errors: number, requests: number, elapsedMs: number}>}
 *   of the recorded requests: latencies and send lags in ms, sorted; `onRecording` is called when recording starts
 *   (e.g. to read a process's CPU time).
 */
async function openLoop(o) {
  const workers = o.workers ?? 4;
  const base = process.hrtime.bigint();
  const intervalMs = 1000 / o.rate;
  const warmupMs = o.warmupMs ?? 1000;
  const total = Math.round((o.rate * (warmupMs + o.durationMs)) / 1000);
  const request = { url: o.url, path: o.path, method: o.method ?? 'GET', headers: o.headers, body: o.body };
  const channels = Array.from({ length: workers }, () => new MessageChannel());
  const senders = channels.map(
    (channel) =>
      new Worker(__filename, {
        workerData: { base, role: 'sender', port: channel.port2, request, connections: o.connections ?? 8, expectStatus: o.expectStatus ?? 200 },
        transferList: [channel.port2],
      }),
  );
  // Each sender says 'ready' (its pool made), then sends its results.
  const messages = senders.map((worker) => {
    const next = [];
    const waiting = [];
    worker.on('message', (message) => (waiting.length > 0 ? waiting.shift().resolve(message) : next.push(message)));
    worker.once('error', (error) => waiting.forEach((w) => w.reject(error)));
    return () => (next.length > 0 ? Promise.resolve(next.shift()) : new Promise((resolve, reject) => waiting.push({ resolve, reject })));
  });
  await Promise.all(messages.map((nextMessage) => nextMessage()));
  const results = messages.map((nextMessage) => nextMessage());
  const ports = channels.map((channel) => channel.port1);
  // The first send a little ahead, once the ticker's thread has started.
  const startMs = sinceMs(base) + 50;
  const recordFromMs = startMs + warmupMs;
  const tick = new Worker(__filename, { workerData: { base, startMs, recordFromMs, intervalMs, role: 'ticker', total, ports }, transferList: ports });
  if (o.onRecording) setTimeout(o.onRecording, Math.max(0, recordFromMs - sinceMs(base)));
  const ticked = new Promise((resolve, reject) => {
    tick.once('exit', resolve);
    tick.once('error', reject);
  });
  const [parts] = await Promise.all([Promise.all(results), ticked]);
  await Promise.all(senders.map((worker) => worker.terminate()));
  const merge = (key) => concatSorted(parts.map((part) => part[key]));
  return {
    latencies: merge('latencies'),
    lags: merge('lags'),
    errors: parts.reduce((n, part) => n + part.errors, 0),
    // The most requests one worker had due and waiting for a free connection at once.
    waitingMost: Math.max(...parts.map((part) => part.waitingMost)),
    requests: Math.round((o.rate * o.durationMs) / 1000),
    // From the first recorded send to the last answer.
    elapsedMs: sinceMs(base) - recordFromMs,
  };
}

/** Float64Arrays as one, sorted. */
function concatSorted(arrays) {
  const all = new Float64Array(arrays.reduce((n, a) => n + a.length, 0));
  let at = 0;
  for (const a of arrays) {
    all.set(a, at);
    at += a.length;
  }
  return all.sort();
}

/** The p-th percentile (0-100) of sorted values. */
function quantile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

module.exports = { concatSorted, openLoop, quantile };
