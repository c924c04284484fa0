// The sandbox runtime: `process`, what transforms and packages read of it (nothing of the host's).
/* global ErrorCtor, ObjectFreeze, PromiseCtor, PromiseThen, TypeErrorCtor, callHost, define, lazy, lazyGlobal, limits,
   raiseFatal */
/* exported getProcess */
const getProcess = lazy(function () {
  const EventEmitter = function EventEmitter() {};
  function hrtime(previous) {
    const ns = callHost('hrtime');
    const seconds = Math.floor(ns / 1e9);
    const nanos = ns - seconds * 1e9;
    if (previous === undefined) return [seconds, nanos];
    let s = seconds - previous[0];
    let n = nanos - previous[1];
    if (n < 0) {
      s--;
      n += 1e9;
    }
    return [s, n];
  }
  define(hrtime, 'bigint', function bigint() {
    return BigInt(callHost('hrtime'));
  });
  const version = limits.nodeVersion;
  const proc = {
    env: {},
    argv: ['node'],
    execArgv: [],
    version: version,
    versions: ObjectFreeze({ node: version.slice(1) }),
    release: ObjectFreeze({ name: 'node' }),
    platform: 'linux',
    arch: 'x64',
    title: 'node',
    browser: false,
    exitCode: undefined,
    hrtime: hrtime,
    nextTick: function nextTick(callback) {
      if (typeof callback !== 'function') throw new TypeErrorCtor('The "callback" argument must be of type function');
      const args = Array.prototype.slice.call(arguments, 1);
      PromiseThen(PromiseCtor.resolve(), function () {
        try {
          callback.apply(undefined, args);
        } catch (e) {
          raiseFatal(e);
        }
      });
    },
    cwd: function cwd() {
      return '/';
    },
    uptime: function uptime() {
      return callHost('hrtime') / 1e9;
    },
    memoryUsage: function memoryUsage() {
      return { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 };
    },
    emitWarning: function emitWarning() {},
    exit: function exit() {
      throw new ErrorCtor('process.exit() is not available to a transform');
    },
    abort: function abort() {
      throw new ErrorCtor('process.abort() is not available to a transform');
    },
    kill: function kill() {
      throw new ErrorCtor('process.kill() is not available to a transform');
    },
    binding: function binding() {
      throw new ErrorCtor('process.binding() is not available to a transform');
    },
    umask: function umask() {
      return 0o22;
    },
    on: function on() {
      return proc;
    },
    once: function once() {
      return proc;
    },
    off: function off() {
      return proc;
    },
    addListener: function addListener() {
      return proc;
    },
    removeListener: function removeListener() {
      return proc;
    },
    removeAllListeners: function removeAllListeners() {
      return proc;
    },
    listeners: function listeners() {
      return [];
    },
    emit: function emit() {
      return false;
    },
    stdout: {
      write: function write() {
        return true;
      },
      isTTY: false,
    },
    stderr: {
      write: function write() {
        return true;
      },
      isTTY: false,
    },
  };
  define(proc, 'constructor', EventEmitter);
  return proc;
});
lazyGlobal('process', getProcess);
