import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ivm from 'isolated-vm';
import { CODE_CACHE_MANIFEST, readModuleCodeCache, sha256, writeModuleCodeCaches } from './module-code-cache';
import { ModuleScripts, type ModuleManifest } from './sandbox-modules';

/**
 * The bundled modules' code caches: used for the very source they were made from, refused (and compiled from source)
 * otherwise, never run stale. A module is a bundle as the build writes it, run in a context that collects its exports.
 */
const bundle = (value: string) => `__gatehouse_module(function (exports, require, module) { module.exports = { value: ${value}, twice: (x) => x * 2 }; });\n`;

describe('Bundled modules: code caches', () => {
  let dir: string;
  let isolate: ivm.Isolate;
  const manifest: ModuleManifest = { mod: { file: 'mod.js', kind: 'package', version: '1.0.0', bytes: 0 } };

  function load(scripts: ModuleScripts): unknown {
    const context = isolate.createContextSync();
    context.evalSync('globalThis.__gatehouse_module = (f) => { const m = { exports: {} }; f(m.exports, null, m); globalThis.exported = m.exports.value; };');
    const problem = scripts.run('mod', context);
    const value: unknown = problem ?? context.global.getSync('exported');
    context.release();
    return value;
  }

  async function produce(source: string): Promise<void> {
    writeFileSync(join(dir, 'mod.js'), source);
    const producer = new ModuleScripts(isolate, 1 << 20, dir, manifest);
    load(producer);
    await writeModuleCodeCaches(dir, manifest, async (name) => producer.produceCodeCache(name));
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-code-cache-'));
    isolate = new ivm.Isolate({ memoryLimit: 32 });
  });
  afterEach(() => {
    isolate.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('compiles a module from the cache made for its source, in another isolate', async () => {
    await produce(bundle('41'));
    isolate.dispose();
    isolate = new ivm.Isolate({ memoryLimit: 32 });
    const scripts = new ModuleScripts(isolate, 1 << 20, dir, manifest);
    expect(load(scripts)).toBe(41);
    expect(scripts.counts).toEqual({ compiled: 1, fromCodeCache: 1, codeCacheRejected: 0 });
  });

  it('never uses a cache made for another source, even one V8 would take (the same length)', async () => {
    await produce(bundle('41'));
    writeFileSync(join(dir, 'mod.js'), bundle('42'));
    // V8 compares a cache with its source by length only: given this cache, it runs the old code.
    const stale = readModuleCodeCacheFor(bundle('41'));
    const fresh = new ivm.Isolate({ memoryLimit: 32 });
    const context = fresh.createContextSync();
    context.evalSync('globalThis.__gatehouse_module = (f) => { const m = { exports: {} }; f(m.exports, null, m); globalThis.exported = m.exports.value; };');
    fresh.compileScriptSync(bundle('42'), { filename: 'gatehouse:module/mod', cachedData: new ivm.ExternalCopy(stale) }).runSync(context);
    expect(context.global.getSync('exported')).toBe(41);
    fresh.dispose();
    // The sandbox checks the source's SHA-256 first, and compiles the new source.
    expect(readModuleCodeCache(dir, 'mod', bundle('42'))).toBeNull();
    const scripts = new ModuleScripts(isolate, 1 << 20, dir, manifest);
    expect(load(scripts)).toBe(42);
    expect(scripts.counts).toEqual({ compiled: 1, fromCodeCache: 0, codeCacheRejected: 0 });
  });

  it('compiles from the source when V8 refuses the cache (corrupt, or another V8)', async () => {
    await produce(bundle('41'));
    writeFileSync(join(dir, 'mod.cache'), Buffer.alloc(4096, 0x5a));
    // Another isolate (the producer's would find the script in V8's own compilation cache).
    isolate.dispose();
    isolate = new ivm.Isolate({ memoryLimit: 32 });
    const scripts = new ModuleScripts(isolate, 1 << 20, dir, manifest);
    expect(load(scripts)).toBe(41);
    expect(scripts.counts).toEqual({ compiled: 1, fromCodeCache: 0, codeCacheRejected: 1 });
    // A manifest of another V8 is not even read.
    const other = mkdtempSync(join(tmpdir(), 'gatehouse-code-cache-'));
    writeFileSync(join(other, 'mod.cache'), Buffer.alloc(4096, 0x5a));
    writeFileSync(
      join(other, CODE_CACHE_MANIFEST),
      JSON.stringify({ node: 'v0', v8: '0.0', modules: { mod: { file: 'mod.cache', sourceSha256: sha256(bundle('41')), bytes: 1 } } }),
    );
    expect(readModuleCodeCache(other, 'mod', bundle('41'))).toBeNull();
    rmSync(other, { recursive: true, force: true });
  });

  function readModuleCodeCacheFor(source: string): ArrayBuffer {
    const data = readModuleCodeCache(dir, 'mod', source);
    if (data === null) throw new Error('no cache');
    return data;
  }
});
