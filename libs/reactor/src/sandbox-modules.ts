import { isAscii } from 'node:buffer';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ivm from 'isolated-vm';
import { readModuleCodeCache } from './module-code-cache';

/** One bundled module in dist/sandbox-modules/manifest.json (written by scripts/build-sandbox-modules.js). */
export interface BundledModule {
  file: string;
  kind: 'builtin' | 'package';
  /** The package's version, or the polyfill's `name@version` for a built-in module. */
  version: string | null;
  bytes: number;
}

export type ModuleManifest = Record<string, BundledModule>;

/** What isolated-vm sets on a script compiled with `cachedData` or `produceCachedData` (its typings leave it out). */
type CachedDataScript = ivm.Script & { cachedData?: ivm.ExternalCopy<ArrayBuffer>; cachedDataRejected?: boolean };

/**
 * Where the bundles are: dist/sandbox-modules, seen from this module in its sources (libs/reactor/src) and from its
 * compiled copy (dist/libs/reactor/src) alike. Null when they were never built (`npm run build` builds them).
 */
export function sandboxModulesDirectory(): string | null {
  for (const dir of [join(__dirname, '..', '..', '..', 'sandbox-modules'), join(__dirname, '..', '..', '..', 'dist', 'sandbox-modules')]) {
    if (existsSync(join(dir, 'manifest.json'))) return dir;
  }
  return null;
}

let manifestCache: ModuleManifest | undefined;

/** The bundled modules, read once per process; empty when they were never built. */
export function bundledModules(): ModuleManifest {
  if (manifestCache === undefined) {
    const dir = sandboxModulesDirectory();
    manifestCache = dir === null ? {} : (JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as ModuleManifest);
  }
  return manifestCache;
}

/**
 * A bundle's text. esbuild writes ASCII (it escapes the rest), which decodes as Latin-1 without UTF-8's validation: a
 * few milliseconds instead of about a hundred for the largest bundle.
 */
function sourceOf(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

/**
 * The bundled modules of one isolate: each compiled on its first `require` in this process, then kept (every later
 * context that requires it runs the same compiled script: V8 parses and compiles it once). A script's source and code
 * stay on the isolate's heap, so what is kept is bounded by `maxBytes` of source (least recently required out first):
 * the packages one tenant required cannot crowd out another tenant's transform. A module too large for the heap fails
 * that transform's `require`, never the process.
 */
export class ModuleScripts {
  private readonly scripts = new Map<string, { script: ivm.Script; bytes: number }>();
  private bytes = 0;
  /** Bundles compiled in this process, those of them compiled from their code cache, and caches V8 refused. */
  readonly counts = { compiled: 0, fromCodeCache: 0, codeCacheRejected: 0 };
  constructor(
    private readonly isolate: ivm.Isolate,
    private readonly maxBytes: number,
    private readonly directory: string | null = sandboxModulesDirectory(),
    private readonly manifest: ModuleManifest = bundledModules(),
  ) {}

  /** Runs the bundle of `name` in `context`; the bundle hands its factory to the runtime's one-shot `__gatehouse_module`. */
  run(name: string, context: ivm.Context): string | null {
    const entry = Object.hasOwn(this.manifest, name) ? this.manifest[name] : undefined;
    if (entry === undefined || this.directory === null) return `the module '${name}' is not bundled in this build`;
    let cached = this.scripts.get(name);
    if (cached === undefined) {
      const bytes = readFileSync(join(this.directory, entry.file));
      cached = { script: this.compile(name, bytes), bytes: bytes.byteLength };
      this.add(name, cached);
    } else {
      this.scripts.delete(name);
      this.scripts.set(name, cached);
    }
    try {
      cached.script.runSync(context);
    } catch (error) {
      // The module's own top-level code threw (in the transform's context): that error, for the transform.
      return error instanceof Error ? error.message : String(error);
    }
    return null;
  }

  /** Compiled from the build's code cache when there is one for this very source (V8 falls back to the source if it refuses it). */
  private compile(name: string, bytes: Buffer): ivm.Script {
    const data = readModuleCodeCache(this.directory as string, name, bytes);
    const script: CachedDataScript = this.isolate.compileScriptSync(sourceOf(bytes), {
      filename: `gatehouse:module/${name}`,
      ...(data === null ? {} : { cachedData: new ivm.ExternalCopy(data) }),
    });
    this.counts.compiled++;
    if (data !== null) {
      if (script.cachedDataRejected === true) this.counts.codeCacheRejected++;
      else this.counts.fromCodeCache++;
    }
    return script;
  }

  /**
   * The code cache of a module this isolate has compiled and run (by a process that runs no tenant code: the build's,
   * code-cache-child.ts). Compiling the same source again finds V8's own compilation cache, whose functions now include
   * those the module's top level ran, so the cache holds them too (a cache made right after compiling holds the top
   * level alone). Null when the module was never compiled here.
   */
  produceCodeCache(name: string): ArrayBuffer | null {
    const entry = Object.hasOwn(this.manifest, name) ? this.manifest[name] : undefined;
    if (entry === undefined || this.directory === null || !this.scripts.has(name)) return null;
    const source = sourceOf(readFileSync(join(this.directory, entry.file)));
    const script: CachedDataScript = this.isolate.compileScriptSync(source, { filename: `gatehouse:module/${name}`, produceCachedData: true });
    const data = script.cachedData?.copy() ?? null;
    script.release();
    return data;
  }

  private add(name: string, cached: { script: ivm.Script; bytes: number }): void {
    this.scripts.set(name, cached);
    this.bytes += cached.bytes;
    for (const [oldest, kept] of this.scripts) {
      if (this.bytes <= this.maxBytes || oldest === name) break;
      this.scripts.delete(oldest);
      this.bytes -= kept.bytes;
      kept.script.release();
    }
  }

  get size(): number {
    return this.scripts.size;
  }

  /** Forgets every script (their references died with the isolate). */
  clear(): void {
    this.scripts.clear();
    this.bytes = 0;
  }
}
