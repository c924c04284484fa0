// The sandbox runtime: Node's sub-path modules (`stream/promises`, `timers/promises`, `util/types`, ...), each a part
// of another module or a few functions over it, as Node defines them.
/* global ErrorCtor, G, JSONParse, PromiseCtor, TypeErrorCtor, U8, define, getBuffer, getTextDecoder, joinBytes, lazy, requireModule, utf8Encode */
/* exported SUBPATH_MODULES */
function abortedError(signal) {
  const e = new ErrorCtor('The operation was aborted');
  define(e, 'name', 'AbortError');
  define(e, 'code', 'ABORT_ERR');
  if (signal !== undefined && signal.reason !== undefined) define(e, 'cause', signal.reason);
  return e;
}
function checkSignal(options) {
  const signal = options !== undefined && options !== null ? options.signal : undefined;
  if (signal !== undefined && (signal === null || typeof signal !== 'object' || !('aborted' in signal))) {
    throw new TypeErrorCtor('The "options.signal" property must be an instance of AbortSignal.');
  }
  return signal;
}
// A promise settled by `start(resolve)` unless the signal aborts it first (then `stop` undoes what start did).
function abortable(signal, start, stop) {
  if (signal !== undefined && signal.aborted) return PromiseCtor.reject(abortedError(signal));
  return new PromiseCtor(function (resolve, reject) {
    let onAbort = null;
    const handle = start(function (value) {
      if (onAbort !== null) signal.removeEventListener('abort', onAbort);
      resolve(value);
    });
    if (signal !== undefined) {
      onAbort = function () {
        stop(handle);
        reject(abortedError(signal));
      };
      signal.addEventListener('abort', onAbort);
    }
  });
}

const getTimersPromises = lazy(function () {
  function setTimeout(delay, value, options) {
    const signal = checkSignal(options);
    return abortable(
      signal,
      function (done) {
        return G.setTimeout(function () {
          done(value);
        }, delay);
      },
      G.clearTimeout,
    );
  }
  function setImmediate(value, options) {
    const signal = checkSignal(options);
    return abortable(
      signal,
      function (done) {
        return G.setImmediate(function () {
          done(value);
        });
      },
      G.clearImmediate,
    );
  }
  // An async iterator yielding `value` every `delay` ms; ticks that pass while nobody awaits are counted, as Node's.
  function setInterval(delay, value, options) {
    const signal = checkSignal(options);
    let ticks = 0;
    let waiting = null;
    let done = false;
    const id = G.setInterval(function () {
      ticks++;
      if (waiting !== null) {
        const w = waiting;
        waiting = null;
        w();
      }
    }, delay);
    function finish() {
      done = true;
      G.clearInterval(id);
    }
    return {
      [Symbol.asyncIterator]: function () {
        return this;
      },
      next: function () {
        if (done) return PromiseCtor.resolve({ value: undefined, done: true });
        if (ticks > 0) {
          ticks--;
          return PromiseCtor.resolve({ value: value, done: false });
        }
        return abortable(
          signal,
          function (resolve) {
            waiting = function () {
              ticks--;
              resolve({ value: value, done: false });
            };
          },
          function () {
            waiting = null;
            finish();
          },
        );
      },
      return: function () {
        finish();
        return PromiseCtor.resolve({ value: undefined, done: true });
      },
    };
  }
  const scheduler = {
    wait: function wait(delay, options) {
      return setTimeout(delay, undefined, options);
    },
    yield: function yield_() {
      return setImmediate();
    },
  };
  return { setTimeout: setTimeout, setImmediate: setImmediate, setInterval: setInterval, scheduler: scheduler };
});

// stream/consumers: the whole of a readable stream (or any async iterable) as one value.
const getStreamConsumers = lazy(function () {
  async function bytesOf(stream) {
    const chunks = [];
    for await (const chunk of stream) {
      chunks.push(
        typeof chunk === 'string' ? utf8Encode(chunk) : ArrayBuffer.isView(chunk) ? new U8(chunk.buffer, chunk.byteOffset, chunk.byteLength) : new U8(chunk),
      );
    }
    return joinBytes(chunks);
  }
  async function text(stream) {
    const decoder = new (getTextDecoder())();
    let out = '';
    for await (const chunk of stream) out += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    return out + decoder.decode();
  }
  return {
    arrayBuffer: async function arrayBuffer(stream) {
      return (await bytesOf(stream)).buffer;
    },
    buffer: async function buffer(stream) {
      const b = await bytesOf(stream);
      return getBuffer().from(b.buffer, b.byteOffset, b.byteLength);
    },
    text: text,
    json: async function json(stream) {
      return JSONParse(await text(stream));
    },
  };
});

// name -> what the module is; the registry (modules.js) serves them once their base module is there.
const SUBPATH_MODULES = {
  'stream/promises': function () {
    return requireModule('stream').promises;
  },
  'stream/consumers': getStreamConsumers,
  'timers/promises': getTimersPromises,
  'util/types': function () {
    return requireModule('util').types;
  },
  'path/posix': function () {
    return requireModule('path');
  },
  'assert/strict': function () {
    return requireModule('assert').strict;
  },
};
