import type { Reactor, TransformResult } from '../../src';

/** Helpers for the reactor's specs: in test/, so neither built into dist nor collected as a test file. */

/** The body of a successful transform; anything else fails the test with what came back. */
export function okBody(result: TransformResult): any {
  if (!result.ok) throw new Error(`expected ok, got ${result.status} ${JSON.stringify(result.body)}`);
  return result.body;
}

/**
 * Waits until no invocation runs, no sandbox process is starting, and the sandbox processes have reported what they did after their
 * last answer (the next fresh context, trimmed warm contexts): their counters stop changing.
 */
export async function settled(reactor: Reactor): Promise<void> {
  let last = '';
  for (;;) {
    const stats = reactor.stats();
    const now = JSON.stringify(stats);
    if (stats.busy === 0 && stats.starting === 0 && now === last) return;
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
}
