import type { Reactor, TransformResult } from '../../src';

/** Helpers for the reactor's specs: in test/, so neither built into dist nor collected as a test file. */

/** The body of a successful transform; anything else fails the test with what came back. */
export function okBody(result: TransformResult): any {
  if (!result.ok) throw new Error(`expected ok, got ${result.status} ${JSON.stringify(result.body)}`);
  return result.body;
}

/** Waits until every isolate has finished getting ready for its next invocation. */
export async function settled(reactor: Reactor): Promise<void> {
  while (reactor.stats().busy > 0) await new Promise((resolve) => setTimeout(resolve, 5));
}
