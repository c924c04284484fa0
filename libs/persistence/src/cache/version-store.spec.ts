import { InMemoryVersionStore, inVersionScope, VersionScopedStore } from './version-store';

/** An in-memory store that counts the reads that reach it. */
class CountingStore extends InMemoryVersionStore {
  reads = 0;
  override async read(name: string): Promise<string> {
    this.reads++;
    return super.read(name);
  }
}

describe('VersionScopedStore', () => {
  it('reads a version once per request scope, and again in the next scope', async () => {
    const inner = new CountingStore();
    const store = new VersionScopedStore(inner);
    await inVersionScope(async () => {
      expect(await store.read('applications')).toBe('0');
      expect(await store.read('applications')).toBe('0');
      expect(await store.read('proxy')).toBe('0');
    });
    expect(inner.reads).toBe(2);
    await inner.bump('applications');
    // A new request (scope) reads again and sees the change another writer made in between.
    await inVersionScope(async () => expect(await store.read('applications')).toBe('1'));
    expect(inner.reads).toBe(3);
  });

  it("forgets the remembered version once the request's own write bumps it", async () => {
    const inner = new CountingStore();
    const store = new VersionScopedStore(inner);
    await inVersionScope(async () => {
      expect(await store.read('applications')).toBe('0');
      await store.bump('applications');
      expect(await store.read('applications')).toBe('1');
    });
  });

  it('keeps concurrent requests apart', async () => {
    const inner = new CountingStore();
    const store = new VersionScopedStore(inner);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = inVersionScope(async () => {
      const before = await store.read('applications');
      await held;
      return [before, await store.read('applications')];
    });
    // Meanwhile another request changes the version, and reads it: it is not answered from the first one's scope.
    await inVersionScope(async () => {
      await inner.bump('applications');
      expect(await store.read('applications')).toBe('1');
    });
    release();
    // The first request keeps the version it started with: it is judged as of its first read.
    expect(await first).toEqual(['0', '0']);
  });

  it('reads every time outside a scope', async () => {
    const inner = new CountingStore();
    const store = new VersionScopedStore(inner);
    await store.read('applications');
    await store.read('applications');
    expect(inner.reads).toBe(2);
  });
});
