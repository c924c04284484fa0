// The sandbox runtime: pending host work (svc, timers).
/* global G, MapCtor, MapDelete, MapGet, MapSet, MathMax, MathMin, PromiseCtor, PromiseThen, TypeErrorCtor, callHost,
   define, host, limits */
/* exported deliver, fatal, fatalFired, newFatal, nextPendingId, pending, raiseFatal, timerCallbacks */
const pending = new MapCtor();
let nextPendingId = 1;
// Rejected by a timer or microtask callback that throws: it aborts the run it belongs to. A new one
// is made for every run (see beginRun), and a run during which it fired is never reused.
let fatalReject = null;
let fatalFired = false;
let fatal = null;
function newFatal() {
  fatal = new PromiseCtor(function (_, reject) {
    fatalReject = reject;
  });
  PromiseThen(fatal, undefined, function () {});
  fatalFired = false;
}
newFatal();
function raiseFatal(e) {
  fatalFired = true;
  fatalReject(e);
}

// Called by the host (through a Reference it holds) when svc or timer work completes.
function deliver(id, payload, bytes) {
  const handler = MapGet(pending, id);
  if (handler === undefined) return;
  MapDelete(pending, id);
  handler(payload, bytes);
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
    try {
      callback.apply(undefined, extra);
    } catch (e) {
      raiseFatal(e);
    }
  });
  return id;
}
function clearTimeoutImpl(id) {
  if (MapDelete(timerCallbacks, id)) {
    MapDelete(pending, id);
    host('clearTimer', id);
  }
}
define(G, 'setTimeout', setTimeoutImpl);
define(G, 'clearTimeout', clearTimeoutImpl);
define(G, 'queueMicrotask', function queueMicrotask(callback) {
  if (typeof callback !== 'function') throw new TypeErrorCtor('The "callback" argument must be of type function');
  PromiseThen(PromiseCtor.resolve(), function () {
    try {
      callback();
    } catch (e) {
      raiseFatal(e);
    }
  });
});
// setImmediate: a timer of 0 ms (the loop runs nothing else between); setInterval: a timer that starts the next one.
const intervals = new MapCtor();
// setImmediate: the sandbox has no I/O of its own to let through, so an immediate runs as a task after the current
// microtasks, without a round trip to the host; every IMMEDIATE_BURST-th one goes through a host timer instead, so code
// that polls with setImmediate (waiting for a svc answer) still lets the host deliver (node-forge's PRNG and node-jose
// chain thousands of them: a host timer each cost a millisecond and two process wake-ups).
const IMMEDIATE_BURST = 1000;
let immediateBurst = 0;
const immediates = new MapCtor();
define(G, 'setImmediate', function setImmediate(callback) {
  if (typeof callback !== 'function') throw new TypeErrorCtor('The "callback" argument must be of type function');
  const args = Array.prototype.slice.call(arguments, 1);
  if (immediateBurst >= IMMEDIATE_BURST) {
    immediateBurst = 0;
    return setTimeoutImpl(function () {
      callback.apply(undefined, args);
    }, 0);
  }
  immediateBurst++;
  const id = nextPendingId++;
  MapSet(immediates, id, true);
  PromiseThen(PromiseCtor.resolve(), function () {
    if (!MapDelete(immediates, id)) return;
    try {
      callback.apply(undefined, args);
    } catch (e) {
      raiseFatal(e);
    }
  });
  return id;
});
define(G, 'clearImmediate', function clearImmediate(id) {
  if (!MapDelete(immediates, id)) clearTimeoutImpl(id);
});
define(G, 'setInterval', function setInterval(callback, ms) {
  if (typeof callback !== 'function') throw new TypeErrorCtor('The "callback" argument must be of type function');
  const args = Array.prototype.slice.call(arguments, 2);
  const handle = { timer: 0 };
  const key = nextPendingId;
  function tick() {
    handle.timer = setTimeoutImpl(tick, ms);
    callback.apply(undefined, args);
  }
  handle.timer = setTimeoutImpl(tick, ms);
  MapSet(intervals, key, handle);
  return key;
});
define(G, 'clearInterval', function clearInterval(id) {
  const handle = MapGet(intervals, id);
  if (handle === undefined) return;
  MapDelete(intervals, id);
  clearTimeoutImpl(handle.timer);
});
