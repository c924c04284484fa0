// The sandbox runtime: the response of require('http') / require('https') (an IncomingMessage whose body, already whole,
// flows as one chunk) and the EventEmitter that it and the client's objects (http-client.js) are made of.
/* global ObjectKeys, PromiseCtor, PromiseThen, StringCtor, U8, define, requireModule, toBuffer */
/* exported eventEmitterClass, incomingMessage */

// The `events` module's EventEmitter when the runtime has one, else this one (what http's objects need of it).
let EmitterClass = null;
function eventEmitterClass() {
  if (EmitterClass !== null) return EmitterClass;
  try {
    const events = optionalModule('events');
    EmitterClass = typeof events === 'function' ? events : events.EventEmitter;
  } catch (_) {
    EmitterClass = null;
  }
  if (typeof EmitterClass !== 'function') EmitterClass = MiniEmitter;
  return EmitterClass;
}
function optionalModule(name) {
  return requireModule(name);
}
class MiniEmitter {
  constructor() {
    define(this, '_events', {});
  }
  on(name, fn) {
    (this._events[name] || (this._events[name] = [])).push(fn);
    return this;
  }
  addListener(name, fn) {
    return this.on(name, fn);
  }
  prependListener(name, fn) {
    (this._events[name] || (this._events[name] = [])).unshift(fn);
    return this;
  }
  once(name, fn) {
    const wrapper = (...args) => {
      this.off(name, wrapper);
      return fn.apply(this, args);
    };
    define(wrapper, 'listener', fn);
    return this.on(name, wrapper);
  }
  off(name, fn) {
    const list = this._events[name];
    if (!list) return this;
    for (let i = list.length - 1; i >= 0; i--)
      if (list[i] === fn || list[i].listener === fn) {
        list.splice(i, 1);
        break;
      }
    return this;
  }
  removeListener(name, fn) {
    return this.off(name, fn);
  }
  removeAllListeners(name) {
    if (name === undefined) define(this, '_events', {});
    else delete this._events[name];
    return this;
  }
  emit(name) {
    const list = this._events[name];
    const args = Array.prototype.slice.call(arguments, 1);
    if (!list || list.length === 0) {
      if (name === 'error') throw args[0];
      return false;
    }
    for (const fn of list.slice()) fn.apply(this, args);
    return true;
  }
  listenerCount(name) {
    const list = this._events[name];
    return list ? list.length : 0;
  }
  listeners(name) {
    return (this._events[name] || []).slice();
  }
  setMaxListeners() {
    return this;
  }
}

// A response as Node gives it: the body, already whole, flows as one chunk once read (data/end/close).
function incomingMessage(head, bytes) {
  const Emitter = eventEmitterClass();
  const chunk = toBuffer(new U8(bytes));
  const res = new Emitter();
  let encoding = null;
  let flowing = false;
  let delivered = false;
  let destroyed = false;
  const fields = {
    statusCode: head.status,
    statusMessage: head.statusText,
    httpVersion: head.httpVersion,
    headers: head.headers,
    rawHeaders: head.rawHeaders,
    trailers: {},
    rawTrailers: [],
    url: '',
    method: null,
    complete: true,
    aborted: false,
    readable: true,
    readableEnded: false,
    destroyed: false,
  };
  for (const key of ObjectKeys(fields)) res[key] = fields[key];
  const httpVersion = StringCtor(head.httpVersion).split('.');
  res.httpVersionMajor = +httpVersion[0];
  res.httpVersionMinor = +httpVersion[1];
  function flush() {
    if (!flowing || delivered || destroyed) return;
    delivered = true;
    if (chunk.length > 0) res.emit('data', encoding === null ? chunk : chunk.toString(encoding));
    res.readable = false;
    res.readableEnded = true;
    res.emit('end');
    res.emit('close');
  }
  function later() {
    PromiseThen(PromiseCtor.resolve(), flush);
  }
  const on = res.on;
  res.on = res.addListener = function (name, fn) {
    on.call(res, name, fn);
    if (name === 'data' && !flowing) {
      flowing = true;
      later();
    }
    return res;
  };
  res.resume = function () {
    flowing = true;
    later();
    return res;
  };
  res.pause = function () {
    flowing = false;
    return res;
  };
  res.isPaused = function () {
    return !flowing;
  };
  res.setEncoding = function (e) {
    encoding = e === undefined ? 'utf8' : e;
    return res;
  };
  res.setTimeout = function () {
    return res;
  };
  res.read = function () {
    if (delivered) return null;
    delivered = true;
    PromiseThen(PromiseCtor.resolve(), function () {
      res.readableEnded = true;
      res.emit('end');
      res.emit('close');
    });
    return encoding === null ? chunk : chunk.toString(encoding);
  };
  res.pipe = function (dest, options) {
    res.on('data', function (c) {
      dest.write(c);
    });
    if (!options || options.end !== false)
      res.on('end', function () {
        dest.end();
      });
    return dest;
  };
  res.unpipe = function () {
    return res;
  };
  res.destroy = function (error) {
    if (destroyed) return res;
    destroyed = true;
    res.destroyed = true;
    PromiseThen(PromiseCtor.resolve(), function () {
      if (error) res.emit('error', error);
      res.emit('close');
    });
    return res;
  };
  res[Symbol.asyncIterator] = async function* () {
    if (!delivered) {
      delivered = true;
      if (chunk.length > 0) yield encoding === null ? chunk : chunk.toString(encoding);
    }
  };
  return res;
}
