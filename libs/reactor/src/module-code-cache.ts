import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * V8 code caches of the bundled modules (dist/sandbox-modules/*.cache), made once at build time
 * (scripts/build-sandbox-modules.js runs code-cache-child.ts): a sandbox process that compiles a bundle on its first
 * `require` deserialises the bytecode instead of parsing and compiling the source, the functions the package's top
 * level ran included (the cache is taken after running it once, see ModuleScripts.produceCodeCache).
 *
 * V8 accepts a cache only from the same V8 version and flags (the producer runs with the sandbox processes' own
 * arguments, SANDBOX_EXEC_ARGV) and rejects anything else: the module is then compiled from its source, as without a
 * cache (the sandbox counts it, `modulesCodeCacheRejected` in the reactor's stats). V8 checks the source only by its
 * length, so each cache names the SHA-256 of the exact source it was made from and is used for that source alone.
 *
 * Caches come from our own bundles only, made by a process that runs no tenant code, and are files of the build
 * (read-only in the image like the bundles themselves): nothing a tenant does reaches another tenant through them.
 */
export const CODE_CACHE_MANIFEST = 'code-cache.json';

export interface CodeCacheManifest {
  /** The Node and V8 versions that made the caches (V8 refuses a cache of another version). */
  node: string;
  v8: string;
  /** The producer's Node arguments (V8 flags among them; ownExecArgv): a cache is used only under the same. */
  execArgv: string[];
  modules: Record<string, { file: string; sourceSha256: string; bytes: number }>;
}

/** The SHA-256 of a bundle's bytes (its file), hex. */
export function sha256(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** This process's Node arguments, less the `--require` of the TypeScript sources a test run adds. */
export function ownExecArgv(): string[] {
  return process.execArgv.filter((arg) => !arg.startsWith('--require') && !arg.endsWith('register-ts-sources.js'));
}

const manifests = new Map<string, CodeCacheManifest | null>();

function manifestIn(directory: string): CodeCacheManifest | null {
  let manifest = manifests.get(directory);
  if (manifest === undefined) {
    const path = join(directory, CODE_CACHE_MANIFEST);
    try {
      manifest = existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as CodeCacheManifest) : null;
    } catch {
      manifest = null;
    }
    manifests.set(directory, manifest);
  }
  return manifest;
}

/** The code cache of module `name` made from exactly these bytes by this V8, as an exact ArrayBuffer; null when there is none. */
export function readModuleCodeCache(directory: string, name: string, source: Uint8Array | string): ArrayBuffer | null {
  const manifest = manifestIn(directory);
  const usable = manifest !== null && manifest.v8 === process.versions.v8 && JSON.stringify(manifest.execArgv) === JSON.stringify(ownExecArgv());
  const entry = usable && Object.hasOwn(manifest.modules, name) ? manifest.modules[name] : undefined;
  if (entry === undefined || entry.sourceSha256 !== sha256(source)) return null;
  try {
    const data = readFileSync(join(directory, entry.file));
    return data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer;
  } catch {
    return null;
  }
}

/** Writes the caches `produce` makes for each module, then the manifest naming them (last: a half-written set is never used). */
export async function writeModuleCodeCaches(
  directory: string,
  modules: Record<string, { file: string }>,
  produce: (name: string) => Promise<ArrayBuffer | null>,
): Promise<CodeCacheManifest> {
  const manifest: CodeCacheManifest = { node: process.version, v8: process.versions.v8, execArgv: ownExecArgv(), modules: {} };
  for (const [name, { file }] of Object.entries(modules)) {
    const source = readFileSync(join(directory, file));
    const data = await produce(name);
    if (data === null) continue;
    const cacheFile = `${file.replace(/\.js$/, '')}.cache`;
    writeFileSync(join(directory, cacheFile), Buffer.from(data));
    manifest.modules[name] = { file: cacheFile, sourceSha256: sha256(source), bytes: data.byteLength };
  }
  writeFileSync(join(directory, CODE_CACHE_MANIFEST), JSON.stringify(manifest, null, 1));
  manifests.delete(directory);
  return manifest;
}
