'use strict';
// Profiling aid for bench:proxy (not a benchmark): Reactor.run from dist in a closed loop, without HTTP, and the CPU
// one run costs in this process and in its sandbox processes. What a transform costs beside the proxy's own work.
// Each run does what the proxy does around it: the body goes in as the bytes that arrived (rawBody) and comes out
// as the bytes to send (payloadResult); with --parsed, as the proxy did before: parsed here, serialised again here.
//   node --no-node-snapshot bench/profile-reactor.js trivial|request|response [seconds] [concurrency] [--parsed]
const { join } = require('node:path');
const { Reactor } = require(join(__dirname, '..', 'dist/libs/reactor/src/index.js'));
const { REALISTIC_REQUEST, REALISTIC_RESPONSE, TRIVIAL, PAYLOAD } = require('./proxy-transforms');

const { childrenOf, processCpuMs } = require('./service');

/** CPU µs (user + system) of the process alone. */
const cpuUs = (pid) => (processCpuMs(pid) ?? NaN) * 1000;

async function main() {
  const parsed = process.argv.includes('--parsed');
  const argv = process.argv.filter((arg) => arg !== '--parsed');
  const which = argv[2] ?? 'trivial';
  const seconds = Number(argv[3] ?? 4);
  const concurrency = Number(argv[4] ?? 8);
  const code = { trivial: TRIVIAL, request: REALISTIC_REQUEST, response: REALISTIC_RESPONSE }[which];
  if (!code) throw new Error('trivial, request or response');
  const bytes = Buffer.from(which === 'response' ? JSON.stringify({ reference: 'ord_7f3a9c', amount: { value: 1250, currency: 'EUR' } }) : PAYLOAD);
  const headers = { 'content-type': 'application/json', 'content-length': String(bytes.length) };
  const args = which === 'response' ? { body: null, headers, status: 200 } : { body: null, headers, method: 'POST', path: '/orders', query: {} };
  const reactor = new Reactor({});
  const inputOf = () => {
    const input = { tenantId: 'bench', code, args: { ...args }, configuration: { SIGNING_SECRET: 'bench-signing-secret' } };
    if (parsed) input.args.body = JSON.parse(bytes.toString('utf8'));
    else Object.assign(input, { rawBody: { text: bytes.toString('utf8'), json: true }, payloadResult: true });
    return input;
  };
  let runs = 0;
  let sent = 0;
  let stop = false;
  const loop = async () => {
    while (!stop) {
      const result = await reactor.run(inputOf());
      if (!result.ok) throw new Error(JSON.stringify(result.body));
      sent += (result.payload ? Buffer.from(result.payload.text) : Buffer.from(JSON.stringify(result.body))).length;
      runs++;
    }
  };
  const during = async (ms) => {
    stop = false;
    const timer = setTimeout(() => (stop = true), ms);
    await Promise.all(Array.from({ length: concurrency }, loop));
    clearTimeout(timer);
  };
  await during(1500);
  const sandboxes = childrenOf(process.pid);
  const sandboxBefore = sandboxes.map(cpuUs);
  const ownBefore = process.cpuUsage();
  const started = performance.now();
  runs = 0;
  await during(seconds * 1000);
  const elapsed = (performance.now() - started) / 1000;
  const own = process.cpuUsage(ownBefore);
  const sandbox = sandboxes.reduce((sum, pid, i) => sum + cpuUs(pid) - sandboxBefore[i], 0);
  console.log(
    `${which}, ${concurrency} at once: ${(runs / elapsed).toFixed(0)} runs/s, CPU per run: this process ${((own.user + own.system) / runs).toFixed(1)} µs, ` +
      `sandbox processes ${(sandbox / runs).toFixed(1)} µs`,
  );
  if (sent === 0) throw new Error('no body came out');
  await reactor.close();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
