import type { PGliteOptions } from '@electric-sql/pglite';

// Group and other permission bits: never given to a file of the embedded database.
const OPEN_TO_OTHERS = 0o077;
// A subpath export, which this project's module resolution cannot type: the little used of it is declared below.
const NODEFS_MODULE: string = '@electric-sql/pglite/nodefs';

interface EmscriptenNodeFs {
  setattr?: (target: unknown, node: unknown, attr: { mode?: number }, ...rest: unknown[]) => unknown;
}
type EmscriptenModule = { FS: { filesystems: { NODEFS?: EmscriptenNodeFs } } };
type EmscriptenOptions = { preRun?: Array<(mod: EmscriptenModule) => void> };
type NodeFsClass = new (dataDir: string) => { init(pg: unknown, opts: EmscriptenOptions): Promise<{ emscriptenOpts: EmscriptenOptions }> };

/**
 * PGlite's file system for a directory on disk, whose files stay owner-only. PGlite runs PostgreSQL under Emscripten,
 * whose file system has no umask: it creates a file, then chmods it to the mode PostgreSQL asked for, and initdb (and
 * anything else opened through fopen) asks for 0666, which the process's umask cannot narrow. Every chmod it makes is
 * narrowed here to the owner's bits instead. Fails closed: if a PGlite upgrade moves this hook, the database does not
 * open (and the test of the files' modes, embedded-files.test.ts, says why).
 */
export async function ownerOnlyNodeFs(dataDir: string): Promise<NonNullable<PGliteOptions['fs']>> {
  const { NodeFS } = (await import(NODEFS_MODULE)) as { NodeFS: NodeFsClass };
  class OwnerOnlyNodeFS extends NodeFS {
    override async init(pg: unknown, opts: EmscriptenOptions) {
      const { emscriptenOpts } = await super.init(pg, opts);
      const narrowModes = (mod: EmscriptenModule) => {
        const nodefs = mod.FS.filesystems.NODEFS;
        const setattr = nodefs?.setattr;
        if (!nodefs || typeof setattr !== 'function') throw new Error('PGlite no longer has the NODEFS.setattr hook that keeps DATA_DIR owner-only');
        nodefs.setattr = (target, node, attr, ...rest) =>
          setattr.call(nodefs, target, node, attr.mode === undefined ? attr : { ...attr, mode: attr.mode & ~OPEN_TO_OTHERS }, ...rest);
      };
      // Before the data directory is mounted, so before initdb or PostgreSQL create a file.
      return { emscriptenOpts: { ...emscriptenOpts, preRun: [narrowModes, ...(emscriptenOpts.preRun ?? [])] } };
    }
  }
  return new OwnerOnlyNodeFS(dataDir) as unknown as NonNullable<PGliteOptions['fs']>;
}
