import { VersionStore } from './version-store';

const MAX_ENTRIES = 10_000;

/**
 * Entries served only while one shared version (VersionStore, bumped on every committed change of the
 * entity type) is unchanged since the entry was loaded, and for at most maxAgeMs, which bounds staleness
 * should a bump ever be lost (the writer could not reach Redis for seconds). Misses (null) are never
 * kept; without a readable version nothing is.
 */
export class VersionedCache<T> {
  private readonly entries = new Map<string, { value: T; version: string; at: number }>();
  /** Lookups served from memory and lookups that went to the database, since start (for the metrics). */
  readonly counts = { hits: 0, misses: 0 };

  constructor(
    private readonly versions: VersionStore,
    private readonly name: string,
    readonly maxAgeMs: number,
    /** Applied once to what is kept (e.g. freezing a value every caller shares). */
    private readonly keep: (value: T) => T = (value) => value,
    /** What may be kept at all (the rest is answered and forgotten, as a miss is). */
    private readonly keepable: (value: T) => boolean = () => true,
  ) {}

  /** The entry kept for `key`, whatever its version (unverified); undefined when none is, or it is too old. */
  peek(key: string): T | undefined {
    const entry = this.entries.get(key);
    return entry && Date.now() - entry.at < this.maxAgeMs ? entry.value : undefined;
  }

  async get(key: string, load: () => Promise<T | null>): Promise<T | null> {
    const version = await this.versions.read(this.name);
    const entry = this.entries.get(key);
    if (version !== null && entry && entry.version === version && Date.now() - entry.at < this.maxAgeMs) {
      this.counts.hits++;
      return entry.value;
    }
    this.counts.misses++;
    const loaded = await load();
    if (version === null || loaded === null || !this.keepable(loaded)) {
      this.entries.delete(key);
      return loaded;
    }
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    const value = this.keep(loaded);
    this.entries.set(key, { value, version, at: Date.now() });
    return value;
  }
}
