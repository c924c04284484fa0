// The sandbox runtime: pending host work (svc, timers).
/* global G, MapCtor, MapDelete, MapGet, MapSet, MathMax, MathMin, PromiseCtor, PromiseThen, TypeErrorCtor, callHost,
   define, host, limits */
/* exported deliver, fatal, fatalFired, newFatal, nextPendingId, pending, timerCallbacks */
const pending = new MapCtor();
let nextPendingId = 1;
// Rejected by a timer or microtask callback that throws: it aborts the run it belongs to. A new one
// is made for every run (see beginRun), and a run during which it fired is never reused.
let fatalReject = null;
let fatalFired = false;
let fatal = null;
function newFatal() {
  fatal = new PromiseCtor(function (_, reject) { fatalReject = reject; });
  PromiseThen(fatal, undefined, function () {});
  fatalFired = false;
}
newFatal();
function raiseFatal(e) {
  fatalFired = true;
  fatalReject(e);
}

// Called by the host (through a Reference it holds) when svc or timer work completes.
function deliver(id, payload) {
  const handler = MapGet(pending, id);
  if (handler === undefined) return;
  MapDelete(pending, id);
  handler(payload);
}

// ---------------------------------------------------------------- timers (bounded by the invocation)
const timerCallbacks = new MapCtor();
function setTimeoutImpl(callback, ms) {
  if (typeof callback !== 'function') throw new TypeErrorCtor('The "callback" argument must be of type function');
  const extra = Array.prototype.slice.call(arguments, 2);
  const id = nextPendingId++;
  const delay = MathMax(0, MathMin(+ms || 0, limits.timeoutMs));
  callHost('timer', id, delay);
  MapSet(timerCallbacks, id, true);
  MapSet(pending, id, function () {
    if (!MapDelete(timerCallbacks, id)) return;
    try { callback.apply(undefined, extra); } catch (e) { raiseFatal(e); }
  });
  return id;
}
function clearTimeoutImpl(id) {
  if (MapDelete(timerCallbacks, id)) { MapDelete(pending, id); host('clearTimer', id); }
}
define(G, 'setTimeout', setTimeoutImpl);
define(G, 'clearTimeout', clearTimeoutImpl);
define(G, 'queueMicrotask', function queueMicrotask(callback) {
  if (typeof callback !== 'function') throw new TypeErrorCtor('The "callback" argument must be of type function');
  PromiseThen(PromiseCtor.resolve(), function () { try { callback(); } catch (e) { raiseFatal(e); } });
});
