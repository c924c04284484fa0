import type ivm from 'isolated-vm';
import type { ContextBinding } from './sandbox-host-functions';

/** A bootstrapped context: fresh (no tenant code has touched it yet) or warm (see WarmContexts). */
export interface PreparedContext {
  context: ivm.Context;
  binding: ContextBinding;
  /** The runtime's `control(op, a, b)`: 'input', 'deliver', 'check', 'start', 'take' or 'wait'. */
  control: ivm.Reference<(op: string, a?: unknown, b?: unknown, c?: unknown) => unknown>;
}

interface WarmContext {
  prepared: PreparedContext;
  codeHash: string;
}

/**
 * Warm contexts kept per isolate, least recently used first out. Measured with
 * isolate.getHeapStatistics() (isolated-vm 6.2, Node 24, 16 contexts of distinct tenants): one warm
 * context adds about 230 KiB of used heap for a trivial transform, about 300 KiB for one using
 * require('crypto'), so 16 of them take about 4-5 MiB of the 64 MiB default, under a tenth. A module
 * that keeps much more in its own scope is covered by WARM_HEAP_FRACTION.
 */
export const MAX_WARM_CONTEXTS = 16;

/**
 * When, after an invocation, the isolate's used heap exceeds this fraction of its limit, every warm
 * context is released: with the script cache (at most a quarter of the heap too), at least half the
 * heap stays for the transform that runs next, whichever tenant's.
 */
export const WARM_HEAP_FRACTION = 0.25;

/**
 * The contexts of one isolate whose last run of one tenant's code ended cleanly, keyed by
 * `${tenantId}\u0000${codeHash}`, kept to run that code again for that tenant only.
 */
export class WarmContexts {
  private readonly warm = new Map<string, WarmContext>();

  constructor(
    private readonly release: (prepared: PreparedContext) => void,
    private readonly max = MAX_WARM_CONTEXTS,
  ) {}

  get size(): number {
    return this.warm.size;
  }

  /** Takes a context out for a run: one that does not end cleanly is never put back. */
  take(key: string): WarmContext | undefined {
    const warm = this.warm.get(key);
    if (warm) this.warm.delete(key);
    return warm;
  }

  keep(key: string, codeHash: string, prepared: PreparedContext): void {
    this.warm.set(key, { prepared, codeHash });
    while (this.warm.size > this.max) {
      const [oldestKey, oldest] = this.warm.entries().next().value as [string, WarmContext];
      this.warm.delete(oldestKey);
      this.release(oldest.prepared);
    }
  }

  releaseWhere(matches: (codeHash: string) => boolean): void {
    for (const [key, warm] of [...this.warm]) {
      if (!matches(warm.codeHash)) continue;
      this.warm.delete(key);
      this.release(warm.prepared);
    }
  }

  /** Forgets every context (their references died with the isolate). */
  clear(): void {
    this.warm.clear();
  }
}
