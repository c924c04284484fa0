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
 * The bundled modules of one isolate: each compiled on its first `require` in this process, then kept for the life of
 * the isolate (every later context that requires it runs the same compiled script: V8 parses and compiles it once).
 * The script's source stays on the isolate's heap: what a module costs there is part of the transform's memory limit,
 * and a module too large for it fails that transform's `require`, never the process.
 */
export class ModuleScripts {
  private readonly scripts = new Map<string, ivm.Script>();
  private readonly directory = sandboxModulesDirectory();
  private readonly manifest = bundledModules();

  constructor(private readonly isolate: ivm.Isolate) {}

  /** Runs the bundle of `name` in `context`; the bundle hands its factory to the runtime's one-shot `__gatehouse_module`. */
  run(name: string, context: ivm.Context): string | null {
    const entry = Object.hasOwn(this.manifest, name) ? this.manifest[name] : undefined;
    if (entry === undefined || this.directory === null) return `the module '${name}' is not bundled in this build`;
    let script = this.scripts.get(name);
    if (script === undefined) {
      const source = readFileSync(join(this.directory, entry.file), 'utf8');
      script = this.isolate.compileScriptSync(source, { filename: `gatehouse:module/${name}` });
      this.scripts.set(name, script);
    }
    try {
      script.runSync(context);
    } catch (error) {
      // The module's own top-level code threw (in the transform's context): that error, for the transform.
      return error instanceof Error ? error.message : String(error);
    }
    return null;
  }

  get size(): number {
    return this.scripts.size;
  }

  clear(): void {
    this.scripts.clear();
  }
}
