'use strict';
// Loaded into the service by the benchmarks (`node --require bench/server-probe.js`, BENCH_PROBE=1): what the API's
// thread does while a benchmark measures it. SIGUSR2 starts a window, the next SIGUSR2 ends it and appends one JSON
// line to BENCH_PROBE_FILE: the event loop's delay (monitorEventLoopDelay, 1 ms resolution: how long a timer due now
// waited), garbage collections by kind (count, total and longest pause, from v8.GCProfiler), the bytes allocated on
// the JavaScript heap (used heap before each collection minus after the one before it), and the CPU time.
// BENCH_PROBE_HEAP=1: also a sampling heap profile of the window, collected objects included (where the bytes are
// allocated), written beside BENCH_PROBE_FILE as <pid>-<n>.heapprofile.
const { appendFileSync } = require('node:fs');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const v8 = require('node:v8');

let window = null;
let session = null;
let windows = 0;

function post(method, params) {
  return new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
}

function start() {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const gc = new v8.GCProfiler();
  gc.start();
  if (process.env.BENCH_PROBE_HEAP === '1') {
    const inspector = require('node:inspector');
    session ??= new inspector.Session();
    session.connect();
    void post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  }
  window = { delay, gc, started: process.hrtime.bigint(), cpu: process.cpuUsage(), used: v8.getHeapStatistics().used_heap_size };
}

function stop() {
  const { delay, gc, started, cpu, used } = window;
  window = null;
  delay.disable();
  const { statistics } = gc.stop();
  const usedNow = v8.getHeapStatistics().used_heap_size;
  let allocated = 0;
  let after = used;
  const kinds = {};
  for (const s of statistics) {
    allocated += Math.max(0, s.beforeGC.heapStatistics.usedHeapSize - after);
    after = s.afterGC.heapStatistics.usedHeapSize;
    const kind = (kinds[s.gcType] ??= { count: 0, totalMs: 0, maxMs: 0 });
    kind.count++;
    kind.totalMs += s.cost / 1000;
    kind.maxMs = Math.max(kind.maxMs, s.cost / 1000);
  }
  allocated += Math.max(0, usedNow - after);
  const used_ = process.cpuUsage(cpu);
  const ms = (ns) => ns / 1e6;
  const line = {
    pid: process.pid,
    elapsedMs: Number(process.hrtime.bigint() - started) / 1e6,
    cpuMs: (used_.user + used_.system) / 1000,
    allocatedBytes: allocated,
    gc: kinds,
    loopDelayMs: {
      p50: ms(delay.percentile(50)),
      p90: ms(delay.percentile(90)),
      p99: ms(delay.percentile(99)),
      p999: ms(delay.percentile(99.9)),
      max: ms(delay.max),
      mean: ms(delay.mean),
    },
  };
  windows++;
  if (session) {
    const file = `${process.env.BENCH_PROBE_FILE}.${process.pid}-${windows}.heapprofile`;
    line.heapProfile = file;
    post('HeapProfiler.stopSampling').then(({ profile }) => {
      require('node:fs').writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
      appendFileSync(process.env.BENCH_PROBE_FILE, `${JSON.stringify(line)}\n`);
    });
    return;
  }
  appendFileSync(process.env.BENCH_PROBE_FILE, `${JSON.stringify(line)}\n`);
}

process.on('SIGUSR2', () => (window ? stop() : start()));
