import { IsolatePool, PoolUnavailableError, type PooledIsolate } from './isolate-pool';

class FakeIsolate implements PooledIsolate {
  disposed = false;
  compiledScripts = 0;
  warmContexts = 0;
  constructor(private readonly ready: () => Promise<void>) {}
  prepare(): Promise<void> {
    return this.disposed ? Promise.reject(new Error('disposed')) : this.ready();
  }
  dispose(): void {
    this.disposed = true;
  }
}

const options = { size: 2, maxQueue: 1, queueTimeoutMs: 1000, prepareTimeoutMs: 1000 };
const tick = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('IsolatePool', () => {
  it('creates isolates on demand up to its size, then queues, then refuses', async () => {
    const created: FakeIsolate[] = [];
    const pool = new IsolatePool(options, () => {
      const isolate = new FakeIsolate(() => Promise.resolve());
      created.push(isolate);
      return isolate;
    });
    const first = await pool.acquire();
    const second = await pool.acquire();
    expect(created).toHaveLength(2);
    expect(pool.stats()).toMatchObject({ isolates: 2, busy: 2, queued: 0 });

    const third = pool.acquire();
    await expect(pool.acquire()).rejects.toBeInstanceOf(PoolUnavailableError);
    expect(pool.stats().queued).toBe(1);

    pool.release(first);
    expect(await third).toBe(first);
    pool.release(second);
    pool.release(first);
    await tick();
    expect(pool.stats()).toMatchObject({ isolates: 2, busy: 0, queued: 0, replaced: 0 });
    await pool.close();
  });

  it('replaces a discarded isolate at once and hands it to the next waiter', async () => {
    const pool = new IsolatePool({ ...options, size: 1 }, () => new FakeIsolate(() => Promise.resolve()));
    const stuck = await pool.acquire();
    const waiting = pool.acquire();
    pool.discard(stuck);
    const replacement = await waiting;
    expect(replacement).not.toBe(stuck);
    expect(stuck.disposed).toBe(true);
    expect(pool.stats()).toMatchObject({ isolates: 1, replaced: 1 });
    pool.release(replacement);
    await pool.close();
  });

  it('discards an isolate that does not become ready in time, and recovers', async () => {
    let hang = false;
    const pool = new IsolatePool({ ...options, size: 1, prepareTimeoutMs: 20 }, () => new FakeIsolate(() => (hang ? new Promise<void>(() => {}) : Promise.resolve())));
    const isolate = await pool.acquire();
    hang = true;
    pool.release(isolate);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(isolate.disposed).toBe(true);
    expect(pool.stats().replaced).toBeGreaterThanOrEqual(1);
    hang = false;
    const recovered = await pool.acquire();
    expect(recovered.disposed).toBe(false);
    pool.release(recovered);
    await pool.close();
  });

  it('backs off instead of spinning when isolates cannot start', async () => {
    let attempts = 0;
    const pool = new IsolatePool({ ...options, size: 1, queueTimeoutMs: 300 }, () => {
      attempts++;
      return new FakeIsolate(() => Promise.reject(new Error('broken environment')));
    });
    await expect(pool.acquire()).rejects.toThrow('No sandbox became free in time');
    expect(attempts).toBeLessThan(5);
    await pool.close();
  });

  it('fails waiting callers on close and disposes idle isolates', async () => {
    const pool = new IsolatePool({ ...options, size: 1 }, () => new FakeIsolate(() => Promise.resolve()));
    const busy = await pool.acquire();
    const waiting = pool.acquire();
    const closed = pool.close();
    await expect(waiting).rejects.toThrow('The reactor is closed');
    await expect(pool.acquire()).rejects.toThrow('The reactor is closed');
    pool.release(busy);
    await closed;
    expect(busy.disposed).toBe(true);
    expect(pool.stats().isolates).toBe(0);
  });
});
