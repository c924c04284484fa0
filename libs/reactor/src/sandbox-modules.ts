import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type ivm from 'isolated-vm';

/** One bundled module in dist/sandbox-modules/manifest.json (written by scripts/build-sandbox-modules.js). */
export interface BundledModule {
  file: string;
  kind: 'builtin' | 'package';
  /** The package's version, or the polyfill's `name@version` for a built-in module. */
  version: string | null;
  bytes: number;
}

export type ModuleManifest = Record<string, BundledModule>;

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
 * The bundled modules of one isolate: each compiled on its first `require` in this process, then kept (every later
 * context that requires it runs the same compiled script: V8 parses and compiles it once). A script's source and code
 * stay on the isolate's heap, so what is kept is bounded by `maxBytes` of source (least recently required out first):
 * the packages one tenant required cannot crowd out another tenant's transform. A module too large for the heap fails
 * that transform's `require`, never the process.
 */
export class ModuleScripts {
  private readonly scripts = new Map<string, { script: ivm.Script; bytes: number }>();
  private bytes = 0;
  private readonly directory = sandboxModulesDirectory();
  private readonly manifest = bundledModules();

  constructor(
    private readonly isolate: ivm.Isolate,
    private readonly maxBytes: number,
  ) {}

  /** Runs the bundle of `name` in `context`; the bundle hands its factory to the runtime's one-shot `__gatehouse_module`. */
  run(name: string, context: ivm.Context): string | null {
    const entry = Object.hasOwn(this.manifest, name) ? this.manifest[name] : undefined;
    if (entry === undefined || this.directory === null) return `the module '${name}' is not bundled in this build`;
    let cached = this.scripts.get(name);
    if (cached === undefined) {
      const source = readFileSync(join(this.directory, entry.file), 'utf8');
      cached = { script: this.isolate.compileScriptSync(source, { filename: `gatehouse:module/${name}` }), bytes: source.length };
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
