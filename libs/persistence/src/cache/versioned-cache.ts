import { VersionStore } from './version-store';

const MAX_ENTRIES = 10_000;

/**
 * Entries served only while one shared version (VersionStore, bumped on every committed change of the
 * entity type) is unchanged since the entry was loaded, and for at most maxAgeMs, which bounds staleness
 * should a bump ever be lost (the writer could not reach Redis for seconds). Misses (null) are never
 * kept; without a readable version nothing is. Lookups of one key that miss under the same version share one load
 * (when an entry expires under a steady load, one database read instead of one per request arriving meanwhile): a
 * lookup that read version V may be answered by a load started under V, as it may by an entry loaded under V.
 */
export class VersionedCache<T> {
  private readonly entries = new Map<string, { value: T; version: string; at: number }>();
  /** Loads under way, by key, with the version they were started under. */
  private readonly loading = new Map<string, { version: string; value: Promise<T | null> }>();
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
    if (version === null) {
      this.entries.delete(key);
      return load();
    }
    const pending = this.loading.get(key);
    if (pending?.version === version) return pending.value;
    const value = this.load(key, version, load);
    this.loading.set(key, { version, value });
    return value;
  }

  private async load(key: string, version: string, load: () => Promise<T | null>): Promise<T | null> {
    try {
      const loaded = await load();
      if (loaded === null || !this.keepable(loaded)) {
        this.entries.delete(key);
        return loaded;
      }
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
      const value = this.keep(loaded);
      this.entries.set(key, { value, version, at: Date.now() });
      return value;
    } finally {
      if (this.loading.get(key)?.version === version) this.loading.delete(key);
    }
  }
}
