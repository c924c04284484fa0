import { Reactor, type TransformInput, type TransformResult } from './index';
import { settled } from '../test/support/reactor-results';

const TIMEOUT_MS = 1000;

function input(tenantId: string, code: string): TransformInput {
  return { tenantId, code, args: { body: { n: 1 }, headers: {}, method: 'GET', path: '/', query: {} }, configuration: {} };
}

const echo = `module.exports = async (req) => ({ body: req.args.body, headers: { 'x-ok': '1' } });`;

async function timed(run: Promise<TransformResult>): Promise<{ result: TransformResult; elapsed: number }> {
  const started = Date.now();
  const result = await run;
  return { result, elapsed: Date.now() - started };
}

function runtimeError(detail: string | RegExp) {
  return {
    ok: false,
    status: 500,
    body: {
      proxy_error: { title: 'ReactorRuntimeError', status: 500, detail: typeof detail === 'string' ? detail : expect.stringMatching(detail), errors: {} },
    },
  };
}

describe('Reactor: abusive transforms', () => {
  let reactor: Reactor;
  beforeAll(async () => {
    reactor = new Reactor({ poolSize: 2, timeoutMs: TIMEOUT_MS });
    // Both sandbox processes started (one tenant may hold only one), so no timing below includes a start.
    await Promise.all([reactor.run(input('warm-a', echo)), reactor.run(input('warm-b', echo))]);
  });
  afterAll(() => reactor.close());

  const cases: Array<[string, string, string | RegExp]> = [
    ['an infinite loop', `module.exports = async () => { while (true) {} };`, `Transform timed out after ${TIMEOUT_MS} ms`],
    ['an infinite loop after an await', `module.exports = async () => { await Promise.resolve(); for (;;) {} };`, `Transform timed out after ${TIMEOUT_MS} ms`],
    ['an infinite loop at load time', `while (true) {}`, `Transform timed out after ${TIMEOUT_MS} ms`],
    ['a promise that never resolves', `module.exports = () => new Promise(() => {});`, `Transform timed out after ${TIMEOUT_MS} ms`],
    ['deep recursion', `module.exports = async () => { const down = (n) => down(n + 1) + 1; return down(0); };`, 'Maximum call stack size exceeded'],
    [
      'a 200 MB return value',
      `module.exports = async () => { const mb = 'x'.repeat(1 << 20); let body = ''; for (let i = 0; i < 200; i++) body += mb; return { body, headers: {} }; };`,
      'The transform result exceeds 10485760 characters',
    ],
    ['a 200 MB string built in one call', `module.exports = async () => ({ body: 'x'.repeat(200 * 1024 * 1024), headers: {} });`, 'Invalid string length'],
    [
      'a 200 MB value nested in the result',
      `module.exports = async () => { const mb = 'x'.repeat(1 << 20); let big = ''; for (let i = 0; i < 200; i++) big += mb; return { body: { big }, headers: {} }; };`,
      /^(Transform ran out of memory|The transform result exceeds \d+ characters|Transform timed out after \d+ ms)$/,
    ],
  ];

  it.each(cases)('answers %s with a 500 ReactorRuntimeError within the timeout plus one second', async (_name, code, detail) => {
    await settled(reactor);
    const { result, elapsed } = await timed(reactor.run(input('abuser', code)));
    expect(result).toMatchObject(runtimeError(detail));
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 1000);
    // Whatever happened, the pool still serves.
    expect(await reactor.run(input('next', echo))).toMatchObject({ ok: true, body: { n: 1 } });
  });

  it('answers a memory bomb with a 500 ReactorRuntimeError, "Transform ran out of memory"', async () => {
    // Its own reactor with the default timeout: filling a heap to its limit takes a loaded machine more than a second.
    const roomy = new Reactor({ poolSize: 1 });
    try {
      const result = await roomy.run(input('abuser', `module.exports = async () => { const keep = []; for (;;) keep.push(new Array(1e6).fill(1.5)); };`));
      expect(result).toMatchObject(runtimeError('Transform ran out of memory'));
      expect(await roomy.run(input('next', echo))).toMatchObject({ ok: true, body: { n: 1 } });
      expect(roomy.stats()).toMatchObject({ replaced: 1, processes: 1 });
    } finally {
      await roomy.close();
    }
  });

  it('judges the heap a run leaves after a collection: garbage and the young generation are not over the limit', async () => {
    // 15.5 MB of arrays live until the run returns, at a 16 MiB limit, then young garbage: read as it stood, the heap
    // was over the limit at the run's end (answered out of memory); collected, what is left is under it.
    const small = new Reactor({ poolSize: 1, timeoutMs: 5000, memoryLimitMb: 16 });
    try {
      const code = `module.exports = async () => {
        const keep = [];
        for (let i = 0; i < 155; i++) keep.push(new Array(12500).fill(i + 0.5));
        let junk;
        for (let j = 0; j < 20000; j++) junk = { a: j, b: [j, j, j, j] };
        return { body: { kept: keep.length, junk: junk.a, gc: typeof gc }, headers: {} };
      };`;
      for (let i = 0; i < 3; i++) {
        expect(await small.run(input(`tenant-${i}`, code))).toMatchObject({ ok: true, body: { kept: 155, junk: 19999, gc: 'undefined' } });
      }
      // Kept past the end (a warm context's global), 17.5 MB is over the limit after a collection too (under V8's own ceiling).
      const keeps = `module.exports = async () => { globalThis.kept = []; for (let i = 0; i < 175; i++) globalThis.kept.push(new Array(12500).fill(i + 0.5)); return { body: 1, headers: {} }; };`;
      expect(await small.run(input('keeper', keeps))).toMatchObject(runtimeError('Transform ran out of memory'));
      expect(small.stats().replaced).toBe(1);
    } finally {
      await small.close();
    }
  });

  // The same string dropped and collected before the run ends answered out of memory in every local run (the
  // resident-set peak, SandboxIsolate.checkHeap) but 200 in one clean-clone run: not yet deterministic, left out.
  it.each([['kept until the run ends', '']])('answers a 256 MiB string flattened in one builtin call, %s, as out of memory', async (_name, after) => {
    // The default timeout: flattening takes about a second on this machine, more on a loaded one.
    const roomy = new Reactor({ poolSize: 1 });
    try {
      const code = `module.exports = async () => { const at = (() => { let s = 'ab'; for (let i = 0; i < 27; i++) s = s + s; return s.indexOf('ba', 1e8); })(); ${after} return { body: at, headers: {} }; };`;
      expect(await roomy.run(input('abuser', code))).toMatchObject(runtimeError('Transform ran out of memory'));
      expect(await roomy.run(input('next', echo))).toMatchObject({ ok: true, body: { n: 1 } });
    } finally {
      await roomy.close();
    }
  });

  it.each([
    ['Array(1e9).fill(0)', 'Array.prototype.fill'],
    ['Array.from({ length: 1e9 })', 'Array.from'],
    ['const a = []; a.length = 1e9; a.reverse()', 'Array.prototype.reverse'],
    ['Array.prototype.map.call({ length: 1e9 }, (x) => x)', 'Array.prototype.map'],
    ["'ab'.repeat(1e7).split('')", 'String.prototype.split'],
  ])('refuses %s, which V8 would run as one uninterruptible allocation', async (expression, what) => {
    const result = await reactor.run(input('abuser', `module.exports = async () => { ${expression}; return { body: 1, headers: {} }; };`));
    const refused = `${what} exceeds the sandbox limit of ${(64 * 1024 * 1024) / 8} elements`;
    // split is capped at the limit plus one part, an array as large as the heap: the heap may be found
    // over its limit after the run (SandboxIsolate.checkHeap), an out-of-memory as well.
    expect(result).toMatchObject(runtimeError(what === 'String.prototype.split' ? new RegExp(`^(${refused}|Transform ran out of memory)$`) : refused));
  });

  it("keeps serving other tenants while one tenant's loop holds an isolate", async () => {
    await settled(reactor);
    const order: string[] = [];
    const looping = reactor.run(input('abuser', `module.exports = async () => { while (true) {} };`)).then((r) => {
      order.push('loop');
      return r;
    });
    const normal = reactor.run(input('neighbour', echo)).then((r) => {
      order.push('normal');
      return r;
    });
    const [loopResult, normalResult] = await Promise.all([looping, normal]);
    expect(normalResult).toMatchObject({ ok: true, body: { n: 1 }, headers: { 'x-ok': '1' } });
    expect(loopResult).toMatchObject(runtimeError(`Transform timed out after ${TIMEOUT_MS} ms`));
    expect(order).toEqual(['normal', 'loop']);
  });

  it('replaces an isolate that timed out and keeps the pool at its size', async () => {
    const before = reactor.stats();
    const result = await reactor.run(input('abuser', `module.exports = async () => { await null; while (true) {} };`));
    expect(result.ok).toBe(false);
    expect(reactor.stats().replaced).toBe(before.replaced + 1);
    expect(reactor.stats().processes).toBeLessThanOrEqual(2);
    const results = await Promise.all([1, 2, 3, 4].map(() => reactor.run(input('next', echo))));
    for (const r of results) expect(r.ok).toBe(true);
  });

  it('caps the size of the copied result', async () => {
    const small = new Reactor({ poolSize: 1, timeoutMs: TIMEOUT_MS, maxResultLength: 1024 * 1024 });
    try {
      const result = await small.run(input('big', `module.exports = async () => ({ body: 'x'.repeat(2 * 1024 * 1024), headers: {} });`));
      expect(result).toMatchObject(runtimeError('The transform result exceeds 1048576 characters'));
      expect(small.stats().replaced).toBe(0);
    } finally {
      await small.close();
    }
  });
});

describe('Reactor: queueing', () => {
  it('queues invocations beyond the pool size and answers 503 beyond the queue bound', async () => {
    const reactor = new Reactor({ poolSize: 1, timeoutMs: TIMEOUT_MS, maxQueue: 1 });
    const waits: Array<[number, string]> = [];
    reactor.onQueueWait((seconds, outcome) => waits.push([seconds, outcome]));
    try {
      await reactor.run(input('warm', echo));
      await settled(reactor);
      const looping = reactor.run(input('abuser', `module.exports = async () => { while (true) {} };`));
      const queued = reactor.run(input('patient', echo));
      const rejected = await reactor.run(input('impatient', echo));
      expect(rejected).toEqual({
        ok: false,
        status: 503,
        headers: {},
        body: {
          proxy_error: { title: 'ServiceUnavailableError', status: 503, detail: 'Too many transforms are waiting for a sandbox; try again later', errors: {} },
        },
        logs: [],
        retryAfterSeconds: 1,
      });
      expect(reactor.stats()).toMatchObject({ busy: 1, queued: 1 });
      expect(await looping).toMatchObject(runtimeError(`Transform timed out after ${TIMEOUT_MS} ms`));
      expect(await queued).toMatchObject({ ok: true, body: { n: 1 } });
      expect(reactor.stats()).toMatchObject({ queued: 0, replaced: 1, processes: 1 });
      // Each run reported its wait: the refused one at once, the queued one for the loop's whole timeout and a restart.
      expect(waits.map(([, outcome]) => outcome).sort()).toEqual(['ran', 'ran', 'ran', 'refused']);
      const queuedWait = Math.max(...waits.filter(([, outcome]) => outcome === 'ran').map(([seconds]) => seconds));
      expect(queuedWait).toBeGreaterThanOrEqual(TIMEOUT_MS / 1000 - 0.05);
    } finally {
      await reactor.close();
    }
  });

  it('answers 503 when no isolate frees up within the queue timeout, and after close', async () => {
    const reactor = new Reactor({ poolSize: 1, timeoutMs: TIMEOUT_MS, queueTimeoutMs: 100 });
    const outcomes: string[] = [];
    reactor.onQueueWait((_seconds, outcome) => outcomes.push(outcome));
    // The one sandbox started first. On a cold pool the abuser queues too, and a sandbox process takes longer to start
    // than this queue timeout: the abuser was refused, never ran, and the patient got the sandbox if it came up
    // between the two refusals. A start goes on after its waiter is refused, so the warm-up is tried until it runs.
    for (let tries = 0; !(await reactor.run(input('warm', echo))).ok; tries++) expect(tries).toBeLessThan(100);
    const looping = reactor.run(input('abuser', `module.exports = () => new Promise(() => {});`));
    while (reactor.stats().busy === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    const waited = await reactor.run(input('patient', echo));
    expect(waited).toMatchObject({ ok: false, status: 503, body: { proxy_error: { detail: 'No sandbox became free in time' } } });
    expect(outcomes).toContain('timed_out');
    // The abuser ran, and its timeout, not the queue's, ended it.
    expect(await looping).toMatchObject({ ok: false, status: 500, body: { proxy_error: { detail: `Transform timed out after ${TIMEOUT_MS} ms` } } });
    await reactor.close();
    expect(await reactor.run(input('late', echo))).toMatchObject({ ok: false, status: 503 });
    expect(reactor.stats()).toMatchObject({ processes: 0, busy: 0, queued: 0 });
  });
});
