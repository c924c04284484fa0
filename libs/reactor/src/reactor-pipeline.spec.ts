import { Reactor, type SvcBridge, type TransformInput } from './index';
import { okBody, settled } from '../test/support/reactor-results';

const TIMEOUT_MS = 1000;

function input(tenantId: string, code: string, body: unknown = { n: 1 }, svc?: SvcBridge): TransformInput {
  return { tenantId, code, args: { body, headers: {}, method: 'POST', path: '/', query: {} }, configuration: {}, svc };
}

const echo = `module.exports = async (req) => ({ body: req.args.body, headers: {} });`;

describe('Reactor: a tenant’s invocations pipelined into the sandbox process it holds', () => {
  let reactor: Reactor;
  beforeAll(async () => {
    reactor = new Reactor({ poolSize: 2, timeoutMs: TIMEOUT_MS });
    await Promise.all([reactor.run(input('warm-a', echo)), reactor.run(input('warm-b', echo))]);
  });
  afterAll(() => reactor.close());

  it('runs concurrent invocations of one tenant back to back in one process, each with its own input and answer', async () => {
    await settled(reactor);
    const before = reactor.stats();
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => reactor.run(input('busy', echo, { i }))));
    expect(results.map(okBody)).toEqual(Array.from({ length: 40 }, (_, i) => ({ i })));
    expect(reactor.stats().pipelined).toBeGreaterThan(before.pipelined);
    // One process: the tenant's share of a pool of two.
    expect(reactor.stats()).toMatchObject({ replaced: before.replaced, processes: 2 });
  });

  it('fails only the invocation that was running when its process is stopped, and runs the ones behind it elsewhere, once', async () => {
    await settled(reactor);
    // Each invocation behind the loop makes one svc call: one call per invocation shows none ran twice or was lost.
    const calls: unknown[] = [];
    const bridge: SvcBridge = {
      request: async (req) => {
        calls.push(req.body);
        return { status: 200, body: req.body };
      },
    };
    const counted = `module.exports = async (req) => ({ body: await req.svc.request({ method: 'POST', path: '/count', body: req.args.body }), headers: {} });`;
    const pipelined = reactor.stats().pipelined;
    const loop = reactor.run(input('looper', `module.exports = async () => { for (;;) {} };`));
    const behind = Array.from({ length: 5 }, (_, i) => reactor.run(input('looper', counted, { i }, bridge)));
    const stopped = await loop;
    expect(stopped).toMatchObject({ ok: false, status: 500, body: { proxy_error: { detail: `Transform timed out after ${TIMEOUT_MS} ms` } } });
    expect((await Promise.all(behind)).map(okBody)).toEqual(Array.from({ length: 5 }, (_, i) => ({ i })));
    expect(calls.sort((a, b) => (a as { i: number }).i - (b as { i: number }).i)).toEqual(Array.from({ length: 5 }, (_, i) => ({ i })));
    // They had been sent into the looping process (its share of one), not held back.
    expect(reactor.stats().pipelined - pipelined).toBeGreaterThanOrEqual(5);
  });

  it('keeps another tenant served while one tenant’s process works through its pipeline', async () => {
    await settled(reactor);
    const slow = `module.exports = async (req) => { const end = Date.now() + 50; while (Date.now() < end) {} return { body: req.args.body, headers: {} }; };`;
    const done: string[] = [];
    const busy = Array.from({ length: 16 }, (_, i) => reactor.run(input('hog', slow, { i })).then((r) => (done.push('hog'), r)));
    const neighbour = await reactor.run(input('neighbour', echo)).then((r) => (done.push('neighbour'), r));
    expect(okBody(neighbour)).toEqual({ n: 1 });
    expect((await Promise.all(busy)).map(okBody)).toHaveLength(16);
    // The neighbour waited for none of the hog's runs (its own process was idle): at most the one running when it came.
    expect(done.indexOf('neighbour')).toBeLessThanOrEqual(1);
  });
});

describe('Reactor: code a sandbox process has evicted', () => {
  it('is sent again when the process asks for it, while the invocations behind it wait their turn', async () => {
    // A 16 MiB heap caches 4M characters of source: 100 codes of 45,000 characters are more than it keeps.
    const small = new Reactor({ poolSize: 1, timeoutMs: 5000, memoryLimitMb: 16 });
    try {
      const code = (i: number) => `// ${'x'.repeat(45_000)}\nmodule.exports = async (req) => ({ body: { code: ${i}, n: req.args.body.n }, headers: {} });`;
      for (let i = 0; i < 100; i++) expect(okBody(await small.run(input('tenant', code(i))))).toEqual({ code: i, n: 1 });
      // Code 0 was evicted from the process's cache, while this side still counts it as sent.
      const results = await Promise.all([0, 99, 1, 98].map((i, n) => small.run(input('tenant', code(i), { n }))));
      expect(results.map(okBody)).toEqual([
        { code: 0, n: 0 },
        { code: 99, n: 1 },
        { code: 1, n: 2 },
        { code: 98, n: 3 },
      ]);
      expect(small.stats().replaced).toBe(0);
    } finally {
      await small.close();
    }
  });
});
