import type { Registry } from 'prom-client';
import { mirroredCounter, sampledGauge } from './metrics-registry';

/**
 * What the metrics read of the transform sandbox: its `stats()` counters, by name. The reactor owns them and
 * may add or rename some (it is being reworked): a figure it does not report is left out of the exposition.
 */
export interface ReactorStatsSource {
  stats(): object;
}

const GAUGES: Array<[field: string[], name: string, help: string]> = [
  [['isolates', 'processes'], 'gatehouse_reactor_sandboxes', 'Sandboxes (isolates or sandbox processes) alive'],
  [['busy'], 'gatehouse_reactor_busy', 'Transform runs in progress'],
  [['queued'], 'gatehouse_reactor_queued', 'Transform runs waiting for a free sandbox'],
  [['warmContexts'], 'gatehouse_reactor_warm_contexts', 'Contexts kept warm for later runs of the same tenant and code'],
  [['compiledScripts'], 'gatehouse_reactor_compiled_scripts', 'Compiled transform scripts held by the sandboxes'],
];

const COUNTERS: Array<[field: string[], name: string, help: string]> = [
  [['timeouts'], 'gatehouse_reactor_timeouts_total', 'Transform runs stopped at REACTOR_TIMEOUT_MS'],
  [['crashes', 'memoryKills'], 'gatehouse_reactor_memory_kills_total', 'Sandboxes lost during a run (out of memory, a crash)'],
  [['catastrophicErrors'], 'gatehouse_reactor_catastrophic_errors_total', 'Isolates V8 lost control of (restart the process when this grows)'],
  [['replaced'], 'gatehouse_reactor_replaced_total', 'Sandboxes stopped and replaced'],
  [['refused'], 'gatehouse_reactor_refused_total', 'Transform runs refused with 503 (queue full, no sandbox in time)'],
  [['contextsCreated'], 'gatehouse_reactor_contexts_created_total', 'Sandbox contexts bootstrapped'],
  [['warmInvocations'], 'gatehouse_reactor_warm_runs_total', 'Transform runs in a warm context'],
  [['pipelined'], 'gatehouse_reactor_pipelined_total', 'Transform runs sent to a sandbox process while it ran an earlier one of the same tenant'],
];

function field(stats: object, names: string[]): number | undefined {
  for (const name of names) {
    const value = (stats as Record<string, unknown>)[name];
    if (typeof value === 'number' && Number.isFinite(value)) return value;
  }
  return undefined;
}

export function registerReactorMetrics(registry: Registry, reactor: ReactorStatsSource): void {
  for (const [names, name, help] of GAUGES) {
    sampledGauge(registry, name, help, () => {
      const value = field(reactor.stats(), names);
      return value === undefined ? [] : [{ value }];
    });
  }
  for (const [names, name, help] of COUNTERS) mirroredCounter(registry, name, help, () => field(reactor.stats(), names));
}
