import { Reactor, type SvcBridge, type TransformInput } from './index';
import { okBody } from '../test/support/reactor-results';

const TIMEOUT_MS = 1000;
const BUDGET_MS = 5;

function input(code: string, body: Record<string, unknown> = {}, svc?: SvcBridge, tenantId = 'tenant-sync'): TransformInput {
  return { tenantId, code, args: { body, headers: {}, method: 'POST', path: '/', query: {} }, configuration: {}, svc };
}

/**
 * Runs a cheap call until the code runs on the service's thread: a fresh run, then warm ones on the isolate's
 * thread until their average CPU time is low enough (a few runs; more when a busy machine slows the first).
 */
async function warmUp(reactor: Reactor, code: string, svc?: SvcBridge): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const before = reactor.stats().syncInvocations;
    okBody(await reactor.run(input(code, {}, svc)));
    if (reactor.stats().syncInvocations === before + 1) return;
  }
  throw new Error('a cheap transform never ran on the service thread');
}

/** The longest the event loop went without running a 2 ms interval while `work` ran. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ value: T; stallMs: number }> {
  let last = Date.now();
  let stallMs = 0;
  const interval = setInterval(() => {
    const now = Date.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 2);
  try {
    const value = await work();
    stallMs = Math.max(stallMs, Date.now() - last);
    return { value, stallMs };
  } finally {
    clearInterval(interval);
  }
}

// Cheap unless the body says otherwise: every abuse below comes from code that first proved cheap.
const switchable = `
let runs = 0;
module.exports = async (req) => {
  runs++;
  const b = req.args.body;
  if (b.loop) for (;;) {}
  if (b.loopAfterAwait) { await null; for (;;) {} }
  if (b.svcThenLoop) { req.svc.applications.list(); for (;;) {} }
  if (b.burnMs) { const until = Date.now() + b.burnMs; while (Date.now() < until) {} }
  if (b.bomb) { const keep = []; for (;;) keep.push(new Array(1e5).fill(1.5)); }
  if (b.buffers) { const keep = []; for (;;) keep.push(new Uint8Array(1 << 20)); }
  if (b.svc) { const answer = await req.svc.applications.list(); return { body: { runs, svc: answer }, headers: {} }; }
  if (b.timer) { await new Promise((resolve) => setTimeout(resolve, 5)); }
  return { body: { runs }, headers: { 'x-runs': String(runs) } };
};`;

describe('Reactor: warm runs of cheap transforms on the service thread', () => {
  let reactor: Reactor;
  let svcCalls: number;
  const svc: SvcBridge = {
    request: async () => {
      svcCalls++;
      return { status: 200, body: { items: [] } };
    },
  };

  beforeEach(() => {
    svcCalls = 0;
    reactor = new Reactor({ poolSize: 1, timeoutMs: TIMEOUT_MS, syncBudgetMs: BUDGET_MS });
  });
  afterEach(() => reactor.close());

  it('runs a cheap warm transform synchronously, with the same results and module state as on the isolate thread', async () => {
    expect(okBody(await reactor.run(input(switchable)))).toEqual({ runs: 1 });
    expect(okBody(await reactor.run(input(switchable)))).toEqual({ runs: 2 });
    for (let i = 3; i <= 30; i++) {
      const result = await reactor.run(input(switchable));
      expect(result).toMatchObject({ ok: true, body: { runs: i }, headers: { 'x-runs': String(i) } });
    }
    const stats = reactor.stats();
    // The first run loads the module (fresh context), the next ones measure the warm call (usually one is
    // enough; on a busy machine the spare context being built on the isolate's thread may inflate a few); then synchronous.
    expect(stats.syncInvocations).toBeGreaterThanOrEqual(15);
    expect(stats).toMatchObject({ contextsCreated: 2, syncOverruns: 0, replaced: 0 });
  });

  it('never shares the synchronous context between tenants', async () => {
    await warmUp(reactor, switchable);
    const other = await reactor.run(input(switchable, {}, undefined, 'tenant-other'));
    expect(okBody(other)).toEqual({ runs: 1 });
  });

  it('finishes a run that awaits svc or a timer on the isolate thread', async () => {
    await warmUp(reactor, switchable, svc);
    const syncBefore = reactor.stats().syncInvocations;
    expect(okBody(await reactor.run(input(switchable, { svc: true }, svc)))).toMatchObject({ svc: { items: [] } });
    expect(okBody(await reactor.run(input(switchable, { timer: true }, svc)))).toHaveProperty('runs');
    expect(svcCalls).toBe(1);
    // Both started on the service thread and went on after it; the context is still warm.
    expect(reactor.stats().syncInvocations).toBe(syncBefore + 2);
    expect(okBody(await reactor.run(input(switchable, {}, svc)))).toHaveProperty('runs');
  });

  it.each([
    ['an infinite loop', { loop: true }],
    ['an infinite loop after an await', { loopAfterAwait: true }],
  ])('stops %s at its budget and runs it again off the service thread, which keeps serving', async (_name, body) => {
    await warmUp(reactor, switchable);
    const started = Date.now();
    const { value: result, stallMs } = await longestStall(() => reactor.run(input(switchable, body)));
    expect(result).toMatchObject({ ok: false, status: 500, body: { proxy_error: { title: 'ReactorRuntimeError', detail: `Transform timed out after ${TIMEOUT_MS} ms` } } });
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1000);
    // Blocked for the budget (plus scheduling), never for the timeout.
    expect(stallMs).toBeLessThan(TIMEOUT_MS / 2);
    expect(reactor.stats().syncOverruns).toBe(1);
    expect(okBody(await reactor.run(input(switchable)))).toEqual({ runs: 1 });
  });

  it('sends no svc request of an attempt it stopped: the request goes out once, from the second attempt', async () => {
    await warmUp(reactor, switchable, svc);
    const result = await reactor.run(input(switchable, { svcThenLoop: true }, svc));
    expect(result).toMatchObject({ ok: false, status: 500 });
    expect(reactor.stats().syncOverruns).toBe(1);
    expect(svcCalls).toBe(1);
  });

  it.each([
    ['of arrays', { bomb: true }],
    ['of array buffers', { buffers: true }],
  ])('answers a memory bomb %s with a 500 and keeps serving', async (_name, body) => {
    await warmUp(reactor, switchable);
    const result = await reactor.run(input(switchable, body));
    expect(result).toMatchObject({
      ok: false,
      status: 500,
      body: { proxy_error: { title: 'ReactorRuntimeError', detail: expect.stringMatching(/^(Transform ran out of memory|Array buffer allocation failed)$/) } },
    });
    expect(okBody(await reactor.run(input(switchable)))).toEqual({ runs: 1 });
    expect(reactor.stats().catastrophicErrors).toBe(0);
  });

  it('sends code that keeps running slow off the service thread for good', async () => {
    // A budget the slow runs fit in: they complete on the service thread, each one a strike.
    const roomy = new Reactor({ poolSize: 1, timeoutMs: TIMEOUT_MS, syncBudgetMs: 200 });
    try {
      await warmUp(roomy, switchable);
      // Four strikes: the cheap synchronous runs in between forgive a little of each.
      for (let i = 0; i < 4; i++) {
        const syncBefore = roomy.stats().syncInvocations;
        okBody(await roomy.run(input(switchable, { burnMs: 20 })));
        expect(roomy.stats().syncInvocations).toBe(syncBefore + 1);
        // Cheap runs in between bring the average CPU back down, so the next slow run is synchronous too.
        for (let j = 0; j < 15; j++) okBody(await roomy.run(input(switchable)));
      }
      const syncBefore = roomy.stats().syncInvocations;
      for (let i = 0; i < 5; i++) okBody(await roomy.run(input(switchable)));
      expect(roomy.stats().syncInvocations).toBe(syncBefore);
      expect(roomy.stats().warmContexts).toBe(1);
    } finally {
      await roomy.close();
    }
  });

  it('runs everything on the isolate thread when the budget is 0', async () => {
    const off = new Reactor({ poolSize: 1, timeoutMs: TIMEOUT_MS, syncBudgetMs: 0 });
    try {
      for (let i = 1; i <= 5; i++) expect(okBody(await off.run(input(switchable)))).toEqual({ runs: i });
      expect(off.stats()).toMatchObject({ syncInvocations: 0, warmInvocations: 4 });
    } finally {
      await off.close();
    }
  });
});
