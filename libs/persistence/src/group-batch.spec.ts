import { GroupBatch } from './group-batch';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('GroupBatch', () => {
  it('sends a lone item at once and groups the items that arrive while batches are out', async () => {
    const runs: Array<{ items: number[]; done: ReturnType<typeof deferred<number[]>> }> = [];
    const batch = new GroupBatch<number, number>(
      (items) => {
        const done = deferred<number[]>();
        runs.push({ items, done });
        return done.promise;
      },
      3,
      1,
    );
    const first = batch.add(1);
    await Promise.resolve();
    expect(runs.map((r) => r.items)).toEqual([[1]]);
    const waiting = [2, 3, 4, 5].map((n) => batch.add(n));
    await Promise.resolve();
    // One batch in flight at most: the others wait for it.
    expect(runs).toHaveLength(1);
    runs[0]!.done.resolve([10]);
    expect(await first).toBe(10);
    await new Promise((r) => setImmediate(r));
    expect(runs.map((r) => r.items)).toEqual([[1], [2, 3, 4]]);
    runs[1]!.done.resolve([20, 30, 40]);
    await new Promise((r) => setImmediate(r));
    expect(runs.map((r) => r.items)).toEqual([[1], [2, 3, 4], [5]]);
    runs[2]!.done.resolve([50]);
    expect(await Promise.all(waiting)).toEqual([20, 30, 40, 50]);
  });

  it('fails every item of a failed batch, and only those', async () => {
    let calls = 0;
    const batch = new GroupBatch<number, number>(
      async (items) => {
        calls++;
        if (items.includes(2)) throw new Error('statement failed');
        return items.map((n) => n * 10);
      },
      10,
      1,
    );
    const first = batch.add(1);
    await Promise.resolve();
    const [one, two, three] = await Promise.allSettled([first, batch.add(2), batch.add(3)]);
    expect(one).toEqual({ status: 'fulfilled', value: 10 });
    expect(two).toMatchObject({ status: 'rejected', reason: new Error('statement failed') });
    expect(three).toMatchObject({ status: 'rejected', reason: new Error('statement failed') });
    await expect(batch.add(4)).resolves.toBe(40);
    expect(calls).toBe(3);
  });

  it('survives a runner that throws synchronously', async () => {
    const batch = new GroupBatch<number, number>(() => {
      throw new Error('sync');
    });
    await expect(batch.add(1)).rejects.toThrow('sync');
  });
});
