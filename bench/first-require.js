'use strict';
// What the first `require` of a bundled package costs in a sandbox process (not a benchmark with a target): cold is the
// first in a new sandbox process (read, compile or load the code cache, run the package's top level), warm the first
// in a new context of the same process (the compiled script reused). Reactor.run from dist, one sandbox process, each
// package in a process of its own, ROUNDS times; the median and the range are printed.
//   npm run build && node --no-node-snapshot bench/first-require.js [package ...]
// BENCH_ROUNDS (default 5).
const { join } = require('node:path');
const { loadavg } = require('node:os');
const { Reactor } = require(join(__dirname, '..', 'dist/libs/reactor/src/index.js'));
const { processCpuMs } = require('./service');

const PACKAGES = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['twilio', '@adyen/api-library', 'openpgp', 'pdfkit', 'axios', 'node-jose'];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

// Timed inside the sandbox (process.hrtime is the host's clock), so the figure is the require alone; and the CPU time the
// sandbox process spent on that run, which a loaded machine inflates less than the wall clock.
const code = (name) => `module.exports = async () => {
  const started = process.hrtime.bigint();
  require(${JSON.stringify(name)});
  return { body: { ms: Number(process.hrtime.bigint() - started) / 1e6 } };
};`;

async function timeOnce(reactor, tenantId, name) {
  const [pid] = reactor.stats().pids;
  const cpuBefore = processCpuMs(pid);
  const result = await reactor.run({ tenantId, code: code(name), args: { body: null, headers: {} }, configuration: {} });
  if (!result.ok) throw new Error(`${name}: ${JSON.stringify(result.body)}`);
  return { ms: result.body.ms, cpu: processCpuMs(pid) - cpuBefore };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));

async function main() {
  const load = loadavg()[0];
  let fromCache = 0;
  let compiled = 0;
  console.log('| package | cold (median) | cold (range) | cold CPU (median) | warm (median) |');
  console.log('|---|---:|---:|---:|---:|');
  for (const name of PACKAGES) {
    const cold = [];
    const coldCpu = [];
    const warm = [];
    for (let round = 0; round < ROUNDS; round++) {
      const reactor = new Reactor({ poolSize: 1, timeoutMs: 30000, memoryLimitMb: 128 });
      try {
        // A transform that requires nothing first: the process is started and ready, its runtime compiled.
        await reactor.run({ tenantId: 'warmup', code: 'module.exports = async () => ({ body: 1 });', args: { body: null, headers: {} }, configuration: {} });
        const first = await timeOnce(reactor, 'first', name);
        cold.push(first.ms);
        coldCpu.push(first.cpu);
        warm.push((await timeOnce(reactor, 'second', name)).ms);
        const stats = reactor.stats();
        fromCache += stats.modulesFromCodeCache;
        compiled += stats.modulesCompiled;
      } finally {
        await reactor.close();
      }
    }
    console.log(
      `| \`${name}\` | ${fmt(median(cold))} ms | ${fmt(Math.min(...cold))}-${fmt(Math.max(...cold))} ms | ${fmt(median(coldCpu))} ms | ${fmt(median(warm))} ms |`,
    );
  }
  console.log(
    `\n${ROUNDS} rounds each; ${fromCache} of ${compiled} bundles compiled from the code cache; load average ${load.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end.`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
