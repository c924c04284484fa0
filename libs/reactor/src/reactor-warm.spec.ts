import { Reactor, type SvcBridge, type TransformInput } from './index';
import { okBody, settled, statsReaching } from '../test/support/reactor-results';

const TIMEOUT_MS = 1000;

function input(tenantId: string, code: string, body: Record<string, unknown> = {}, svc?: SvcBridge): TransformInput {
  return { tenantId, code, args: { body, headers: {}, method: 'GET', path: '/', query: {} }, configuration: { tenant: tenantId }, svc };
}

// Reports what it sees, then (for tenant-a only) pollutes globals and prototypes.
const polluter = `module.exports = async (req) => {
  let pushed;
  try { const list = []; list.push(1); pushed = list.length; } catch (e) { pushed = e.message; }
  const seen = { x: String(({}).x), y: typeof y, pushed, upper: 'abc'.toUpperCase() };
  if (req.configuration.tenant === 'tenant-a') {
    Object.prototype.x = 1;
    globalThis.y = 1;
    Array.prototype.push = function () { throw new Error('hijacked push'); };
    String.prototype.toUpperCase = () => 'hijacked';
  }
  return { body: seen, headers: {} };
};`;

const observer = `module.exports = async () => {
  let pushed;
  try { const list = []; list.push(1); pushed = list.length; } catch (e) { pushed = e.message; }
  return { body: { x: String(({}).x), y: typeof y, pushed, upper: 'abc'.toUpperCase() }, headers: {} };
};`;

const clean = { x: 'undefined', y: 'undefined', pushed: 1, upper: 'ABC' };
const polluted = { x: '1', y: 'number', pushed: 'hijacked push', upper: 'hijacked' };

describe('Reactor: warm contexts (reuse per tenant and code)', () => {
  let reactor: Reactor;
  beforeEach(() => {
    // One isolate: every invocation below runs in it, so any sharing across tenants would show.
    reactor = new Reactor({ poolSize: 1, timeoutMs: TIMEOUT_MS });
  });
  afterEach(() => reactor.close());

  it("never lets one tenant's pollution reach another tenant running the same code", async () => {
    expect(okBody(await reactor.run(input('tenant-a', polluter)))).toEqual(clean);
    // Tenant A's own next run is in its (polluted) warm context: reuse is visible within one tenant and code only.
    expect(okBody(await reactor.run(input('tenant-a', polluter)))).toEqual(polluted);
    expect(reactor.stats().warmInvocations).toBe(1);
    // Tenant B, same code, same isolate: a fresh context.
    expect(okBody(await reactor.run(input('tenant-b', polluter)))).toEqual(clean);
    expect(okBody(await reactor.run(input('tenant-b', polluter)))).toEqual(clean);
    // And tenant A's warm context is still its own.
    expect(okBody(await reactor.run(input('tenant-a', polluter)))).toEqual(polluted);
    expect(reactor.stats()).toMatchObject({ processes: 1, replaced: 0, warmContexts: 2 });
  });

  it("never lets one tenant's pollution reach another tenant running other code", async () => {
    expect(okBody(await reactor.run(input('tenant-a', polluter)))).toEqual(clean);
    expect(okBody(await reactor.run(input('tenant-a', polluter)))).toEqual(polluted);
    expect(okBody(await reactor.run(input('tenant-b', observer)))).toEqual(clean);
    // Other code of the polluting tenant does not get the polluted context either.
    expect(okBody(await reactor.run(input('tenant-a', observer)))).toEqual(clean);
  });

  it('reuses the warm context of the same tenant and code instead of creating contexts, with correct results', async () => {
    const counter = `let count = 0; module.exports = async (req) => ({ body: { count: ++count, n: req.args.body.n, tenant: req.configuration.tenant }, headers: {} });`;
    expect(okBody(await reactor.run(input('tenant-a', counter, { n: 0 })))).toEqual({ count: 1, n: 0, tenant: 'tenant-a' });
    await settled(reactor);
    const before = reactor.stats();
    expect(before.warmContexts).toBe(1);
    for (let n = 1; n <= 5; n++) {
      // Module scope persists (count), the input is each invocation's own (n).
      expect(okBody(await reactor.run(input('tenant-a', counter, { n })))).toEqual({ count: n + 1, n, tenant: 'tenant-a' });
    }
    await settled(reactor);
    const after = reactor.stats();
    expect(after.contextsCreated).toBe(before.contextsCreated);
    expect(after.warmInvocations).toBe(before.warmInvocations + 5);
    expect(after.warmContexts).toBe(1);
  });

  it('keeps logs, svc and timers per invocation in a warm context', async () => {
    const calls: string[] = [];
    const svc: SvcBridge = { request: async (req) => (calls.push(req.path), { status: 200, body: { path: req.path } }) };
    const code = `module.exports = async (req) => {
      console.log('run', req.args.body.n);
      await new Promise((resolve) => setTimeout(resolve, 1));
      const answer = await req.svc.request({ method: 'GET', path: '/n/' + req.args.body.n });
      return { body: answer.path, headers: {} };
    };`;
    for (let n = 1; n <= 3; n++) {
      const result = await reactor.run(input('tenant-a', code, { n }, svc));
      expect(result).toMatchObject({ ok: true, body: `/n/${n}`, logs: [`run ${n}`] });
    }
    expect(calls).toEqual(['/n/1', '/n/2', '/n/3']);
    expect(reactor.stats().warmInvocations).toBe(2);
  });

  const modal = `let runs = 0;
  module.exports = async (req) => {
    runs++;
    const mode = req.args.body.mode;
    if (mode === 'loop') for (;;) {}
    if (mode === 'oom') { const keep = []; for (;;) keep.push(new Array(1e6).fill(1.5)); }
    if (mode === 'pending-svc') { req.svc.request({ method: 'GET', path: '/never' }); throw new Error('boom'); }
    if (mode === 'fatal-timer') { setTimeout(() => { throw new Error('late boom'); }, 0); await new Promise((r) => setTimeout(r, 20)); }
    if (mode === 'custom') throw new CustomHttpResponseError({ status: 401, body: { runs }, headers: {} });
    return { body: { runs, mode }, headers: {} };
  };`;

  const never: SvcBridge = { request: () => new Promise(() => undefined) };

  it.each([
    ['a timeout', 'loop', `Transform timed out after ${TIMEOUT_MS} ms`],
    // Filling 64 MiB takes a loaded machine more than the 1 s timeout at times: either limit ends it.
    ['an out-of-memory', 'oom', /Transform (ran out of memory|timed out after \d+ ms)/],
    ['a thrown error that left a pending svc call', 'pending-svc', 'boom'],
    ['an exception in a timer callback', 'fatal-timer', 'late boom'],
  ])('answers correctly after %s, in a fresh context', async (_, mode, detail) => {
    expect(okBody(await reactor.run(input('tenant-a', modal, { mode: 'ok' }, never)))).toEqual({ runs: 1, mode: 'ok' });
    expect(okBody(await reactor.run(input('tenant-a', modal, { mode: 'ok' }, never)))).toEqual({ runs: 2, mode: 'ok' });
    const failed = await reactor.run(input('tenant-a', modal, { mode }, never));
    expect(failed).toMatchObject({ ok: false, status: 500 });
    expect(JSON.stringify(failed.body)).toMatch(detail);
    // The broken context was not kept: the module starts over.
    expect(okBody(await reactor.run(input('tenant-a', modal, { mode: 'ok' }, never)))).toEqual({ runs: 1, mode: 'ok' });
    expect(okBody(await reactor.run(input('tenant-a', modal, { mode: 'ok' }, never)))).toEqual({ runs: 2, mode: 'ok' });
  });

  it('keeps the context after an error the transform throws on purpose', async () => {
    expect(okBody(await reactor.run(input('tenant-a', modal, { mode: 'ok' })))).toEqual({ runs: 1, mode: 'ok' });
    expect(await reactor.run(input('tenant-a', modal, { mode: 'custom' }))).toMatchObject({ ok: false, status: 401, body: { runs: 2 } });
    expect(okBody(await reactor.run(input('tenant-a', modal, { mode: 'ok' })))).toEqual({ runs: 3, mode: 'ok' });
  });

  it('bounds the warm contexts of an isolate and drops them with their code', async () => {
    const small = new Reactor({ poolSize: 1, timeoutMs: TIMEOUT_MS, maxCachedScripts: 2 });
    try {
      const code = (i: number) => `module.exports = async () => ({ body: ${i}, headers: {} });`;
      for (let t = 0; t < 20; t++) expect(okBody(await small.run(input(`tenant-${t}`, code(0))))).toBe(0);
      expect(small.stats().warmContexts).toBe(16);
      // Two more codes evict code 0 from the script cache, and its warm contexts with it.
      expect(okBody(await small.run(input('tenant-0', code(1))))).toBe(1);
      expect(okBody(await small.run(input('tenant-0', code(2))))).toBe(2);
      expect(small.stats()).toMatchObject({ compiledScripts: 2, warmContexts: 2 });
    } finally {
      await small.close();
    }
  });

  it('drops the warm contexts when they hold too much of the heap', async () => {
    // Filling 20 MiB in a fresh context took over a second on a loaded CI machine: this case is about warmth, not time.
    await reactor.close();
    reactor = new Reactor({ poolSize: 1, timeoutMs: 15_000 });
    expect(okBody(await reactor.run(input('tenant-a', observer)))).toEqual(clean);
    await settled(reactor);
    expect(reactor.stats().warmContexts).toBe(1);
    // About 20 MiB kept in module scope: more than a quarter of the 64 MiB heap.
    const hog = `const keep = []; for (let i = 0; i < 20; i++) keep.push(new Array(131072).fill(i + 0.5)); module.exports = async () => ({ body: keep.length, headers: {} });`;
    expect(okBody(await reactor.run(input('tenant-b', hog)))).toBe(20);
    expect(await statsReaching(reactor, { warmContexts: 0, replaced: 0 })).toMatchObject({ warmContexts: 0, replaced: 0 });
    // Nothing is lost but the warmth: both answer again, from fresh contexts.
    expect(okBody(await reactor.run(input('tenant-a', observer)))).toEqual(clean);
    expect(okBody(await reactor.run(input('tenant-b', hog)))).toBe(20);
  });

  it('releases the warm contexts of a disposed isolate', async () => {
    expect(okBody(await reactor.run(input('tenant-a', observer)))).toEqual(clean);
    expect(reactor.stats().warmContexts).toBe(1);
    await reactor.close();
    expect(reactor.stats()).toMatchObject({ processes: 0, warmContexts: 0 });
  });
});
