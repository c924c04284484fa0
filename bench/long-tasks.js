'use strict';
// What keeps the API's thread busy for long stretches (a request that arrives meanwhile waits for all of it), from a
// V8 CPU profile (`--cpu-prof`, one sample per millisecond by default): the busy stretches (runs of samples that are
// not idle) of at least `thresholdMs`, how often they come, what they spent their time in (the entry points of the
// event loop they ran: I/O callbacks, ticks, immediates, timers, and garbage collection), and the gaps between
// samples (the thread, or the profiler's, waiting for a CPU: on a shared machine the tail is there too).

/** The entry point a sample ran under: the first frame below the root that names a phase of the event loop. */
function entryOf(node, parent, byId) {
  const chain = [];
  for (let at = node.id; at !== undefined; at = parent.get(at)) chain.push(byId.get(at));
  chain.reverse(); // root first
  const first = chain[1]?.callFrame;
  if (!first) return '(root)';
  if (first.functionName === 'listOnTimeout') {
    // A timer: name its callback (the frame that listOnTimeout called).
    const callback = chain[2]?.callFrame;
    return `timer ${callback ? `${callback.functionName || '(anonymous)'} ${short(callback.url)}:${callback.lineNumber + 1}` : ''}`;
  }
  return first.functionName || '(anonymous)';
}

const short = (url) => url.replace(/^.*\/(node_modules|dist)\//, '').replace(/^file:\/\//, '');

/**
 * Prints the busy stretches of `profile` between `fromUs` and `toUs` (profile clock) of at least `thresholdMs`, per
 * second of that window, with what they ran, and the gaps between samples longer than `thresholdMs`.
 */
function longTasks(profile, fromUs, toUs, thresholdMs = 2) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const entries = new Map();
  const entryFor = (id) => {
    let entry = entries.get(id);
    if (entry === undefined) entries.set(id, (entry = entryOf(byId.get(id), parent, byId)));
    return entry;
  };
  const stretches = [];
  let current = null;
  let gaps = 0;
  let gapMs = 0;
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (t < fromUs || t > toUs) return;
    if (delta / 1000 >= thresholdMs) {
      gaps++;
      gapMs += delta / 1000;
    }
    const idle = byId.get(id).callFrame.functionName === '(idle)';
    if (idle) {
      if (current && current.ms >= thresholdMs) stretches.push(current);
      current = null;
      return;
    }
    current ??= { ms: 0, by: new Map() };
    current.ms += delta / 1000;
    const entry = entryFor(id);
    current.by.set(entry, (current.by.get(entry) ?? 0) + delta / 1000);
  });
  if (current && current.ms >= thresholdMs) stretches.push(current);
  const seconds = (toUs - fromUs) / 1e6;
  const total = stretches.reduce((s, x) => s + x.ms, 0);
  console.log(
    `busy stretches of the API thread >= ${thresholdMs} ms: ${(stretches.length / seconds).toFixed(1)}/s, ${((total / 1000 / seconds) * 100).toFixed(1)}% of the time, ` +
      `longest ${Math.max(0, ...stretches.map((x) => x.ms)).toFixed(1)} ms; sample gaps >= ${thresholdMs} ms (no CPU): ${(gaps / seconds).toFixed(1)}/s, ${((gapMs / 1000 / seconds) * 100).toFixed(1)}% of the time`,
  );
  const by = new Map();
  for (const stretch of stretches) for (const [entry, ms] of stretch.by) by.set(entry, (by.get(entry) ?? 0) + ms);
  console.log('what those stretches ran (ms per second):');
  for (const [entry, ms] of [...by].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`  ${(ms / seconds).toFixed(2).padStart(7)}  ${entry}`);
}

module.exports = { longTasks };
