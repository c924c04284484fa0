import type ivm from 'isolated-vm';

interface CachedScript {
  script: ivm.Script;
  length: number;
}

/**
 * The compiled transform scripts of one isolate, keyed by code hash, least recently used first out.
 * Sources and bytecode live in the isolate's own heap: bounded by count and by total source length,
 * so the cache can never crowd out the transforms themselves. `onEvict` hears of every script that
 * leaves (the warm contexts running it go too).
 */
export class ScriptCache {
  private readonly scripts = new Map<string, CachedScript>();
  private sourceLength = 0;

  constructor(
    private readonly maxScripts: number,
    private readonly maxSourceLength: number,
    private readonly onEvict: (codeHash: string) => void,
  ) {}

  get size(): number {
    return this.scripts.size;
  }

  has(codeHash: string): boolean {
    return this.scripts.has(codeHash);
  }

  /** The script, marked as just used (re-inserting keeps the Map in least-recently-used order). */
  touch(codeHash: string): ivm.Script | undefined {
    const cached = this.scripts.get(codeHash);
    if (!cached) return undefined;
    this.scripts.delete(codeHash);
    this.scripts.set(codeHash, cached);
    return cached.script;
  }

  add(codeHash: string, script: ivm.Script, length: number): void {
    this.scripts.set(codeHash, { script, length });
    this.sourceLength += length;
    while (this.scripts.size > 1 && (this.scripts.size > this.maxScripts || this.sourceLength > this.maxSourceLength)) {
      const [oldestHash, oldest] = this.scripts.entries().next().value as [string, CachedScript];
      this.scripts.delete(oldestHash);
      this.sourceLength -= oldest.length;
      oldest.script.release();
      this.onEvict(oldestHash);
    }
  }

  /** Forgets every script (their references died with the isolate). */
  clear(): void {
    this.scripts.clear();
    this.sourceLength = 0;
  }
}
