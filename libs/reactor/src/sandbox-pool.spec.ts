import { PoolUnavailableError, SandboxPool, type PooledSandbox, type SandboxPoolOptions } from './sandbox-pool';

class FakeSandbox implements PooledSandbox {
  alive = true;
  /** What runningSince() answers: set by a test to play a sandbox whose invocation has run for a while. */
  since = 0;
  readonly ready: Promise<void>;
  private exit!: () => void;
  private readonly exited = new Promise<void>((resolve) => (this.exit = resolve));

  constructor(start: Promise<void> = Promise.resolve()) {
    this.ready = start;
  }

  kill(): void {
    this.alive = false;
    this.exit();
  }

  exitedOnce(): Promise<void> {
    return this.exited;
  }

  runningSince(): number {
    return this.since;
  }
}

const OPTIONS: SandboxPoolOptions = {
  size: 2,
  tenantMaxConcurrency: 1,
  tenantMaxQueue: 2,
  maxQueue: 100,
  queueTimeoutMs: 5000,
  retryAfterSeconds: 5,
  pipelineDepth: 1,
  pipelineBytes: 1024,
  pipelineStallMs: 50,
};

function pool(options: Partial<SandboxPoolOptions> = {}, create = () => new FakeSandbox()) {
  const created: FakeSandbox[] = [];
  const p = new SandboxPool<FakeSandbox>({ ...OPTIONS, ...options }, () => {
    const sandbox = create();
    created.push(sandbox);
    return sandbox;
  });
  return { pool: p, created };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('SandboxPool: sharing between tenants', () => {
  it('starts every sandbox at the first demand', async () => {
    const { pool: p, created } = pool();
    const first = await p.acquire('a');
    expect(created).toHaveLength(2);
    expect(p.stats()).toMatchObject({ processes: 2, busy: 1 });
    p.release(first);
    await p.close(0);
  });

  it('never lets one tenant hold more than its share, and keeps the rest for the others', async () => {
    const { pool: p } = pool();
    const held = await p.acquire('greedy');
    const greedyWaits = p.acquire('greedy');
    await tick();
    // A sandbox is idle, but not for the tenant already at its share.
    expect(p.stats()).toMatchObject({ busy: 1, queued: 1 });
    const other = await p.acquire('polite');
    expect(p.stats()).toMatchObject({ busy: 2, queued: 1 });
    // The greedy tenant gets its next one only when its own is back.
    p.release(other);
    await tick();
    expect(p.stats()).toMatchObject({ busy: 1, queued: 1 });
    p.release(held);
    expect(await greedyWaits).toBeInstanceOf(FakeSandbox);
    await p.close(0);
  });

  it('bounds each tenant’s queue and refuses beyond it with a Retry-After', async () => {
    const { pool: p } = pool();
    await p.acquire('greedy');
    const waiting = [p.acquire('greedy'), p.acquire('greedy')];
    const refused = await p.acquire('greedy').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PoolUnavailableError);
    expect(refused).toMatchObject({ retryAfterSeconds: 5, message: "This tenant's transforms are waiting for a sandbox; try again later" });
    // Another tenant is not refused for it.
    expect(await p.acquire('polite')).toBeInstanceOf(FakeSandbox);
    expect(p.stats().refused).toBe(1);
    await p.close(0);
    await Promise.allSettled(waiting);
  });

  it('serves waiting tenants in turn, not in arrival order', async () => {
    const { pool: p } = pool({ size: 1, tenantMaxQueue: 10 });
    const holder = await p.acquire('x');
    const order: string[] = [];
    const waits = ['a', 'a', 'a', 'b', 'c'].map((tenant) =>
      p.acquire(tenant).then((sandbox) => {
        order.push(tenant);
        p.release(sandbox);
      }),
    );
    p.release(holder);
    await Promise.all(waits);
    expect(order).toEqual(['a', 'b', 'c', 'a', 'a']);
    await p.close(0);
  });

  it('answers 503 when no sandbox frees up within the queue timeout', async () => {
    const { pool: p } = pool({ size: 1, queueTimeoutMs: 20 });
    await p.acquire('a');
    await expect(p.acquire('b')).rejects.toMatchObject({ message: 'No sandbox became free in time', retryAfterSeconds: 5 });
    await p.close(0);
  });

  it('replaces a discarded sandbox at once and hands it to the next waiter', async () => {
    const { pool: p, created } = pool({ size: 1 });
    const first = await p.acquire('a');
    const next = p.acquire('b');
    p.discard(first);
    expect(first.alive).toBe(false);
    expect(await next).toBe(created[1]);
    expect(p.stats()).toMatchObject({ replaced: 1, processes: 1 });
    await p.close(0);
  });

  it('backs off instead of spinning when sandboxes cannot start', async () => {
    let starts = 0;
    const { pool: p } = pool({ size: 1, queueTimeoutMs: 300 }, () => {
      starts++;
      return new FakeSandbox(Promise.reject(new Error('cannot start')));
    });
    await expect(p.acquire('a')).rejects.toBeInstanceOf(PoolUnavailableError);
    // 300 ms of failures with a backoff from 200 ms: a handful of attempts, not thousands.
    expect(starts).toBeLessThanOrEqual(4);
    await p.close(0);
  });

  it('fails waiting callers on close and stops every sandbox', async () => {
    const { pool: p, created } = pool({ size: 1 });
    const held = await p.acquire('a');
    const waiting = p.acquire('b');
    const closing = p.close(50);
    await expect(waiting).rejects.toMatchObject({ message: 'The reactor is closed' });
    p.release(held);
    await closing;
    expect(created.every((sandbox) => !sandbox.alive)).toBe(true);
    await expect(p.acquire('c')).rejects.toBeInstanceOf(PoolUnavailableError);
  });
});

describe('SandboxPool: pipelining a tenant’s invocations into the sandbox it holds', () => {
  const piped = { pipelineDepth: 3, pipelineBytes: 1000 };

  it('gives the sandbox a tenant holds up to pipelineDepth invocations, then queues', async () => {
    const { pool: p } = pool(piped);
    const first = await p.acquire('a', 10);
    // Under its share of one, the tenant gets the same sandbox again rather than waiting for it.
    expect(await p.acquire('a', 10)).toBe(first);
    expect(await p.acquire('a', 10)).toBe(first);
    const fourth = p.acquire('a', 10);
    await tick();
    expect(p.stats()).toMatchObject({ busy: 1, queued: 1, pipelined: 2 });
    // One done: room for the waiting one, in the same sandbox.
    p.release(first, 10);
    expect(await fourth).toBe(first);
    for (let i = 0; i < 3; i++) p.release(first, 10);
    expect(p.stats()).toMatchObject({ busy: 0, queued: 0 });
    await p.close(0);
  });

  it('sends no more than pipelineBytes of input into one sandbox', async () => {
    const { pool: p } = pool(piped);
    const first = await p.acquire('a', 600);
    const second = p.acquire('a', 600);
    await tick();
    expect(p.stats()).toMatchObject({ queued: 1, pipelined: 0 });
    p.release(first, 600);
    expect(await second).toBe(first);
    p.release(first, 600);
    await p.close(0);
  });

  it('sends nothing more behind an invocation that has run longer than pipelineStallMs', async () => {
    const { pool: p } = pool(piped);
    const first = await p.acquire('a', 10);
    first.since = performance.now() - 60;
    const second = p.acquire('a', 10);
    await tick();
    expect(p.stats()).toMatchObject({ queued: 1, pipelined: 0 });
    first.since = 0;
    p.release(first, 10);
    expect(await second).toBe(first);
    p.release(first, 10);
    await p.close(0);
  });

  it('stops filling a held sandbox while another tenant under its share waits, so it drains and goes round', async () => {
    const { pool: p } = pool({ ...piped, size: 1 });
    const held = await p.acquire('a', 10);
    const other = p.acquire('b', 10);
    const more = p.acquire('a', 10);
    await tick();
    // b waits for a sandbox: a's next one is not slipped in ahead of it.
    expect(p.stats()).toMatchObject({ queued: 2, pipelined: 0 });
    p.release(held, 10);
    expect(await other).toBe(held);
    p.release(held, 10);
    expect(await more).toBe(held);
    p.release(held, 10);
    await p.close(0);
  });

  it('puts an invocation handed back by a stopped sandbox first in line, past a full queue', async () => {
    const { pool: p, created } = pool({ ...piped, size: 1, tenantMaxQueue: 1 });
    const held = await p.acquire('a', 10);
    await p.acquire('a', 10);
    await p.acquire('a', 10);
    const queued = p.acquire('a', 10).then(() => 'queued');
    // The sandbox is stopped for the first one: the second and third were never started.
    p.discard(held);
    p.release(held, 10);
    p.release(held, 10);
    const order = await Promise.race([p.acquire('a', 10, true).then(() => 'requeued'), queued]);
    expect(order).toBe('requeued');
    expect(created[1].alive).toBe(true);
    await p.close(0);
  });
});
