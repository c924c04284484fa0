import { InMemoryVersionStore } from './version-store';
import { VersionedCache } from './versioned-cache';

/** A load that answers when told to, counting how often it was started. */
function gatedLoad<T>(answer: T | null) {
  const state = { started: 0, release: () => undefined as void, fail: (_error: Error) => undefined as void };
  const load = () => {
    state.started++;
    return new Promise<T | null>((resolve, reject) => {
      state.release = () => resolve(answer);
      state.fail = reject;
    });
  };
  return { state, load };
}

describe('VersionedCache', () => {
  it('lookups that miss under the same version share one load, then the entry serves', async () => {
    const versions = new InMemoryVersionStore();
    const cache = new VersionedCache<{ id: string }>(versions, 'proxy', 60_000);
    const { state, load } = gatedLoad({ id: 'p1' });
    const lookups = [cache.get('k', load), cache.get('k', load), cache.get('k', load)];
    await new Promise((resolve) => setImmediate(resolve));
    expect(state.started).toBe(1);
    state.release();
    const values = await Promise.all(lookups);
    expect(values).toEqual([{ id: 'p1' }, { id: 'p1' }, { id: 'p1' }]);
    expect(values[1]).toBe(values[0]);
    expect(await cache.get('k', load)).toBe(values[0]);
    expect(state.started).toBe(1);
  });

  it('a lookup after a bump does not join a load started under the version before it', async () => {
    const versions = new InMemoryVersionStore();
    const cache = new VersionedCache<string>(versions, 'proxy', 60_000);
    const before = gatedLoad('old');
    const first = cache.get('k', before.load);
    await new Promise((resolve) => setImmediate(resolve));
    await versions.bump('proxy');
    const after = gatedLoad('new');
    const second = cache.get('k', after.load);
    await new Promise((resolve) => setImmediate(resolve));
    expect(after.state.started).toBe(1);
    after.state.release();
    before.state.release();
    expect(await second).toBe('new');
    expect(await first).toBe('old');
    // The entry kept under the old version is not served under the new one.
    const again = gatedLoad('newer');
    const third = cache.get('k', again.load);
    await new Promise((resolve) => setImmediate(resolve));
    again.state.release();
    expect(['new', 'newer']).toContain(await third);
  });

  it('a failed load fails every lookup that shared it, and the next lookup loads again', async () => {
    const cache = new VersionedCache<string>(new InMemoryVersionStore(), 'proxy', 60_000);
    const failing = gatedLoad('x');
    const lookups = [cache.get('k', failing.load), cache.get('k', failing.load)];
    await new Promise((resolve) => setImmediate(resolve));
    failing.state.fail(new Error('database down'));
    for (const lookup of lookups) await expect(lookup).rejects.toThrow('database down');
    expect(failing.state.started).toBe(1);
    const next = gatedLoad('y');
    const value = cache.get('k', next.load);
    await new Promise((resolve) => setImmediate(resolve));
    next.state.release();
    expect(await value).toBe('y');
  });

  it('an unknown key is answered to every lookup that shared the load, and never kept', async () => {
    const cache = new VersionedCache<string>(new InMemoryVersionStore(), 'proxy', 60_000);
    const missing = gatedLoad<string>(null);
    const lookups = [cache.get('k', missing.load), cache.get('k', missing.load)];
    await new Promise((resolve) => setImmediate(resolve));
    missing.state.release();
    expect(await Promise.all(lookups)).toEqual([null, null]);
    const later = gatedLoad<string>(null);
    const value = cache.get('k', later.load);
    await new Promise((resolve) => setImmediate(resolve));
    later.state.release();
    expect(await value).toBeNull();
    expect(later.state.started).toBe(1);
  });
});
