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
  // Unchanged over several polls, not one: on a loaded machine a sandbox process's report can lag its answer by more
  // than one 30 ms poll.
  let last = '';
  let stable = 0;
  for (;;) {
    const stats = reactor.stats();
    const now = JSON.stringify(stats);
    stable = stats.busy === 0 && stats.starting === 0 && now === last ? stable + 1 : 0;
    if (stable >= 10) return;
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
}

/** Waits (up to `timeoutMs`) until the reactor's stats match `expected`, then returns them for the assertion. */
export async function statsReaching(reactor: Reactor, expected: Record<string, number>, timeoutMs = 15_000): Promise<ReturnType<Reactor['stats']>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stats = reactor.stats() as unknown as Record<string, number>;
    if (Date.now() > deadline || Object.entries(expected).every(([name, value]) => stats[name] === value)) return reactor.stats();
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
}
