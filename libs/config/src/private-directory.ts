import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * What the process's new files get: owner-only (0600 files, 0700 directories), whatever the library creating them asks
 * for. PGlite creates its files 0666, so without it another local user could read the database (docs/security.md,
 * "Local files"). Set first thing by every entry point (the service, the worker, the CLI).
 */
export const OWNER_ONLY_UMASK = 0o077;

/** DATA_DIR (or a directory the process created above it) is writable by group or others: the process refuses it. */
export class UnsafeDirectoryError extends Error {
  readonly code = 'unsafe_data_dir';
}

export interface PrivateDirectory {
  /** The directory's real path. */
  path: string;
  /** Things the operator should fix, for the log (readable by others, files whose modes were tightened). */
  warnings: string[];
}

/**
 * The directory where the process keeps private files (DATA_DIR: the embedded database, the generated signing key),
 * made owner-only (0700, and so every directory it creates above it) if missing. Refused with one line naming the path
 * and the fix when it is writable by group or others (anyone could replace its files); readable by them is a warning
 * (the files inside are owner-only, but their names show). With `tighten`, files and directories already inside that
 * are open to others (written before this rule, or copied in) are made owner-only too.
 */
export function preparePrivateDirectory(dir: string, label = 'DATA_DIR', options: { tighten?: boolean } = {}): PrivateDirectory {
  const wanted = resolve(dir);
  const firstCreated = mkdirSync(wanted, { recursive: true, mode: 0o700 });
  // Every directory made just now: DATA_DIR and the parents it needed.
  const created: string[] = [];
  if (firstCreated !== undefined) {
    for (let at = wanted; at.length >= firstCreated.length; at = dirname(at)) {
      created.push(at);
      if (at === dirname(at)) break;
    }
  }
  for (const path of created.length > 0 ? created : [wanted]) refuseWritableByOthers(path, label);
  const stat = statSync(wanted);
  if (!stat.isDirectory()) throw new UnsafeDirectoryError(`${label} ${wanted} is not a directory`);
  const warnings: string[] = [];
  if (stat.mode & 0o044) {
    warnings.push(
      `${label} ${wanted} is readable by ${who(stat.mode & 0o044)} (mode ${octal(stat.mode)}): its files are owner-only, ` +
        `but their names are visible; \`chmod 700 ${wanted}\` hides them`,
    );
  }
  if (options.tighten) {
    const tightened = tightenTree(wanted);
    if (tightened > 0) warnings.push(`${label}: ${tightened} file(s) or directories under ${wanted} were open to other users; made owner-only`);
  }
  return { path: wanted, warnings };
}

function refuseWritableByOthers(path: string, label: string): void {
  const mode = statSync(path).mode;
  if (mode & 0o022) {
    throw new UnsafeDirectoryError(
      `${label} ${path} is writable by ${who(mode & 0o022)} (mode ${octal(mode)}): another local user could read or ` +
        `replace the files in it; run \`chmod 700 ${path}\` (or give ${label} an owner-only directory) and start again`,
    );
  }
}

/** Removes group and other permissions from everything under `dir` owned by this process's user; how many changed. */
function tightenTree(dir: string): number {
  const uid = process.getuid?.();
  let changed = 0;
  const stack = [dir];
  while (stack.length > 0) {
    const at = stack.pop()!;
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      const stat = lstatSync(path);
      // A symbolic link's own mode means nothing; one owned by someone else is theirs to fix (and not ours to chmod).
      if (stat.isSymbolicLink() || (uid !== undefined && stat.uid !== uid)) continue;
      if (stat.isDirectory()) stack.push(path);
      if (stat.mode & 0o077) {
        chmodSync(path, stat.mode & 0o700);
        changed++;
      }
    }
  }
  return changed;
}

function who(bits: number): string {
  const group = (bits & 0o070) !== 0;
  const others = (bits & 0o007) !== 0;
  return group && others ? 'group and others' : group ? 'its group' : 'others';
}

function octal(mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, '0');
}
