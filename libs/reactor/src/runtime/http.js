// The sandbox runtime: outbound HTTP, the client half of require('http') / require('https'). Requests go to the sandbox
// process (host op 'http'), which makes them under the destination policy and the invocation's limits
// (src/outbound-http.ts); the response comes back whole through `deliver`. fetch (fetch.js) sends through `sendHttp`.
/* global ArrayIsArray, ErrorCtor, JSONParse, JSONStringify, MapDelete, MapSet, ObjectKeys, PromiseCtor, PromiseThen,
   StringCtor, TypeErrorCtor, U8, asBytes, base64Encode, bytesForHost, clearTimeoutImpl, define, encodeString, host, lazy,
   nextPendingId:writable, pending, requireModule, setTimeoutImpl, toBuffer, utf8Decode, utf8Encode */
/* exported abortHttp, abortError, callHostUrl, eventEmitterClass, getHttp, getHttps, outboundError, sendHttp */

// Sends one request; `done(error, head, bytes)` runs once. Returns the id to abort it with (host op 'httpAbort').
function sendHttp(request, body, done) {
  const id = nextPendingId++;
  MapSet(pending, id, function (payload, bytes) {
    const head = JSONParse(payload);
    if (head.error !== undefined) done(outboundError(head.error, head.code), null, null);
    else done(null, head, bytes === undefined ? new ArrayBuffer(0) : bytes);
  });
  const started = host('http', id, JSONStringify(request), body);
  if (started[0] !== true) {
    MapDelete(pending, id);
    throw outboundError(started[1], 'ERR_GATEHOUSE_OUTBOUND');
  }
  return id;
}
function outboundError(message, code) {
  const e = new ErrorCtor(StringCtor(message));
  if (code !== undefined) define(e, 'code', code);
  return e;
}
function abortHttp(id) {
  if (id !== null) host('httpAbort', id);
}

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

// Host and TLS options of a request, as Node reads them from options and its agent.
const TLS_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'servername', 'rejectUnauthorized', 'minVersion', 'maxVersion', 'ciphers'];
function pemText(value) {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (ArrayIsArray(value)) return value.map(pemText);
  const b = asBytes(value);
  return b === null ? StringCtor(value) : utf8Decode(b, 0, b.length, false);
}
function tlsOptions(options) {
  const tls = {};
  const agentOptions = options.agent && typeof options.agent === 'object' && options.agent.options ? options.agent.options : {};
  for (const key of TLS_KEYS) {
    const value = options[key] !== undefined ? options[key] : agentOptions[key];
    if (value !== undefined) tls[key] = key === 'rejectUnauthorized' ? value !== false : pemText(value);
  }
  return tls;
}

function makeHttp(protocol, defaultPort) {
  const Emitter = eventEmitterClass();
  class Agent extends Emitter {
    constructor(options) {
      super();
      this.options = options === undefined || options === null ? {} : options;
      this.defaultPort = defaultPort;
      this.protocol = protocol;
      this.maxSockets = this.options.maxSockets || Infinity;
      this.keepAlive = this.options.keepAlive === true;
      this.requests = {};
      this.sockets = {};
      this.freeSockets = {};
    }
    destroy() {}
  }
  function fakeSocket() {
    const socket = new Emitter();
    const fields = {
      remoteAddress: undefined,
      remotePort: undefined,
      encrypted: protocol === 'https:',
      authorized: true,
      connecting: false,
      readable: true,
      writable: true,
    };
    for (const key of ObjectKeys(fields)) socket[key] = fields[key];
    for (const name of ['setKeepAlive', 'setNoDelay', 'setTimeout', 'ref', 'unref', 'destroy', 'end'])
      socket[name] = function () {
        return socket;
      };
    socket.getPeerCertificate = function () {
      return {};
    };
    return socket;
  }
  class ClientRequest extends Emitter {
    constructor(input, options, callback) {
      super();
      const o = requestOptions(input, options, protocol, defaultPort);
      if (typeof callback === 'function') this.once('response', callback);
      const headerList = [];
      define(this, '_headerList', headerList);
      define(this, '_chunks', []);
      define(this, '_options', o);
      define(this, '_pendingId', null);
      define(this, '_timer', null);
      this.method = StringCtor(o.method || 'GET').toUpperCase();
      this.path = o.path;
      this.host = o.hostname;
      this.protocol = o.protocol;
      this.aborted = false;
      this.destroyed = false;
      this.finished = false;
      this.writableEnded = false;
      this.writableFinished = false;
      this.reusedSocket = false;
      this.socket = null;
      const given = o.headers || {};
      if (ArrayIsArray(given)) for (let i = 0; i + 1 < given.length; i += 2) this.setHeader(given[i], given[i + 1]);
      else for (const name of ObjectKeys(given)) if (given[name] !== undefined) this.setHeader(name, given[name]);
      if (o.auth && !this.hasHeader('authorization')) this.setHeader('Authorization', 'Basic ' + basicCredentials(o.auth));
      if (o.timeout !== undefined) this.setTimeout(o.timeout);
      if (o.signal) {
        if (o.signal.aborted)
          PromiseThen(PromiseCtor.resolve(), () => {
            this.destroy(abortError());
          });
        else
          o.signal.addEventListener(
            'abort',
            () => {
              this.destroy(abortError());
            },
            { once: true },
          );
      }
      PromiseThen(PromiseCtor.resolve(), () => {
        if (this.destroyed) return;
        this.socket = this.connection = fakeSocket();
        this.emit('socket', this.socket);
      });
    }
    setHeader(name, value) {
      const key = StringCtor(name).toLowerCase();
      for (let i = this._headerList.length - 1; i >= 0; i--) if (this._headerList[i][0].toLowerCase() === key) this._headerList.splice(i, 1);
      this._headerList.push([StringCtor(name), value]);
      return this;
    }
    getHeader(name) {
      const key = StringCtor(name).toLowerCase();
      for (const entry of this._headerList) if (entry[0].toLowerCase() === key) return entry[1];
      return undefined;
    }
    hasHeader(name) {
      return this.getHeader(name) !== undefined;
    }
    removeHeader(name) {
      const key = StringCtor(name).toLowerCase();
      for (let i = this._headerList.length - 1; i >= 0; i--) if (this._headerList[i][0].toLowerCase() === key) this._headerList.splice(i, 1);
    }
    getHeaders() {
      const out = {};
      for (const entry of this._headerList) out[entry[0].toLowerCase()] = entry[1];
      return out;
    }
    getHeaderNames() {
      return this._headerList.map(function (entry) {
        return entry[0].toLowerCase();
      });
    }
    getRawHeaderNames() {
      return this._headerList.map(function (entry) {
        return entry[0];
      });
    }
    flushHeaders() {}
    setNoDelay() {}
    setSocketKeepAlive() {}
    setTimeout(ms, callback) {
      if (typeof callback === 'function') this.once('timeout', callback);
      if (this._timer !== null) clearTimeoutImpl(this._timer);
      this._timer =
        +ms > 0
          ? setTimeoutImpl(() => {
              this._timer = null;
              this.emit('timeout');
            }, +ms)
          : null;
      return this;
    }
    write(chunk, encoding, callback) {
      if (this.writableEnded) throw outboundError('write after end', 'ERR_STREAM_WRITE_AFTER_END');
      if (typeof encoding === 'function') {
        callback = encoding;
        encoding = undefined;
      }
      if (chunk !== undefined && chunk !== null) this._chunks.push(typeof chunk === 'string' ? toBuffer(encodeChunk(chunk, encoding)) : chunk);
      if (typeof callback === 'function') PromiseThen(PromiseCtor.resolve(), callback);
      return true;
    }
    end(chunk, encoding, callback) {
      if (typeof chunk === 'function') {
        callback = chunk;
        chunk = undefined;
      }
      if (typeof encoding === 'function') {
        callback = encoding;
        encoding = undefined;
      }
      if (this.writableEnded) return this;
      if (chunk !== undefined && chunk !== null) this.write(chunk, encoding);
      this.writableEnded = this.finished = true;
      if (typeof callback === 'function') this.once('finish', callback);
      this._send();
      return this;
    }
    _send() {
      const o = this._options;
      const headers = [];
      for (const entry of this._headerList) {
        const values = ArrayIsArray(entry[1]) ? entry[1] : [entry[1]];
        for (const v of values) headers.push(entry[0], StringCtor(v));
      }
      const url = o.protocol + '//' + (o.hostname.indexOf(':') !== -1 && o.hostname[0] !== '[' ? '[' + o.hostname + ']' : o.hostname) + ':' + o.port + o.path;
      const request = { url: url, method: this.method, headers: headers, tls: o.protocol === 'https:' ? tlsOptions(o) : {}, redirect: 'manual', decode: false };
      let body;
      try {
        body = joinBody(this._chunks);
        this._pendingId = sendHttp(request, body, (error, head, bytes) => {
          this._pendingId = null;
          if (this._timer !== null) {
            clearTimeoutImpl(this._timer);
            this._timer = null;
          }
          if (this.destroyed) return;
          if (error !== null) {
            this.destroyed = true;
            this.emit('error', error);
            this.emit('close');
            return;
          }
          const res = incomingMessage(head, bytes);
          res.req = this;
          res.on('end', () => {
            this.emit('close');
          });
          if (!this.emit('response', res)) res.resume();
        });
      } catch (e) {
        PromiseThen(PromiseCtor.resolve(), () => {
          this.destroy(e);
        });
        return;
      }
      PromiseThen(PromiseCtor.resolve(), () => {
        this.writableFinished = true;
        this.emit('finish');
      });
    }
    abort() {
      if (!this.aborted) {
        this.aborted = true;
        this.emit('abort');
        this.destroy();
      }
    }
    destroy(error) {
      if (this.destroyed) return this;
      this.destroyed = true;
      abortHttp(this._pendingId);
      this._pendingId = null;
      if (this._timer !== null) {
        clearTimeoutImpl(this._timer);
        this._timer = null;
      }
      PromiseThen(PromiseCtor.resolve(), () => {
        if (error) this.emit('error', error);
        else if (!this.writableFinished || this.listenerCount('response') > 0) this.emit('error', outboundError('socket hang up', 'ECONNRESET'));
        this.emit('close');
      });
      return this;
    }
  }
  const globalAgent = new Agent({ keepAlive: true });
  function request(input, options, callback) {
    if (typeof options === 'function') return new ClientRequest(input, undefined, options);
    return new ClientRequest(input, options, callback);
  }
  function get(input, options, callback) {
    const req = request(input, options, callback);
    req.end();
    return req;
  }
  const METHODS = [
    'ACL',
    'BIND',
    'CHECKOUT',
    'CONNECT',
    'COPY',
    'DELETE',
    'GET',
    'HEAD',
    'LINK',
    'LOCK',
    'M-SEARCH',
    'MERGE',
    'MKACTIVITY',
    'MKCALENDAR',
    'MKCOL',
    'MOVE',
    'NOTIFY',
    'OPTIONS',
    'PATCH',
    'POST',
    'PROPFIND',
    'PROPPATCH',
    'PURGE',
    'PUT',
    'QUERY',
    'REBIND',
    'REPORT',
    'SEARCH',
    'SOURCE',
    'SUBSCRIBE',
    'TRACE',
    'UNBIND',
    'UNLINK',
    'UNLOCK',
    'UNSUBSCRIBE',
  ];
  return { Agent: Agent, ClientRequest: ClientRequest, globalAgent: globalAgent, request: request, get: get, METHODS: METHODS, STATUS_CODES: STATUS_CODES };
}

function abortError() {
  const e = new ErrorCtor('The operation was aborted');
  define(e, 'name', 'AbortError');
  define(e, 'code', 'ABORT_ERR');
  return e;
}
function encodeChunk(text, encoding) {
  return encoding === undefined ? utf8Encode(text) : encodeString(text, encoding);
}
function joinBody(chunks) {
  if (chunks.length === 0) return undefined;
  let total = 0;
  const parts = [];
  for (const c of chunks) {
    const b = asBytes(c);
    if (b === null) throw new TypeErrorCtor('The "chunk" argument must be of type string or an instance of Buffer or Uint8Array');
    parts.push(b);
    total += b.length;
  }
  const out = new U8(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return bytesForHost(out);
}

// http.request(url[, options][, callback]) / http.request(options[, callback]): one options object.
function requestOptions(input, options, protocol, defaultPort) {
  let o = {};
  if (typeof input === 'string' || (input !== null && typeof input === 'object' && typeof input.href === 'string' && typeof input.searchParams === 'object')) {
    const url = typeof input === 'string' ? callHostUrl(input) : input;
    o = { protocol: url.protocol, hostname: url.hostname, port: url.port, path: url.pathname + url.search };
    if (url.username !== '' || url.password !== '') o.auth = decodeURIComponent(url.username) + ':' + decodeURIComponent(url.password);
    if (options !== null && typeof options === 'object') for (const key of ObjectKeys(options)) o[key] = options[key];
  } else if (input !== null && typeof input === 'object') {
    for (const key of ObjectKeys(input)) o[key] = input[key];
  }
  const expected = o.agent && typeof o.agent === 'object' && o.agent.protocol ? o.agent.protocol : protocol;
  o.protocol = o.protocol || expected;
  if (o.protocol !== protocol) throw new TypeErrorCtor('Protocol "' + o.protocol + '" not supported. Expected "' + protocol + '"');
  let hostname = o.hostname || o.host || 'localhost';
  if (!o.hostname && typeof o.host === 'string' && o.host[0] !== '[' && o.host.indexOf(':') !== -1 && o.host.indexOf(':') === o.host.lastIndexOf(':'))
    hostname = o.host.split(':')[0];
  if (hostname[0] === '[') hostname = hostname.slice(1, -1);
  o.hostname = hostname;
  o.port = o.port === undefined || o.port === null || o.port === '' ? o.defaultPort || defaultPort : +o.port;
  o.path = o.path === undefined || o.path === null ? '/' : StringCtor(o.path);
  if (/[\u0000-\u0020]/.test(o.path)) throw new TypeErrorCtor('Request path contains unescaped characters');
  return o;
}
function callHostUrl(text) {
  const r = host('url', StringCtor(text));
  if (r[0] !== true) {
    const e = new TypeErrorCtor('Invalid URL');
    define(e, 'code', 'ERR_INVALID_URL');
    throw e;
  }
  return r[1];
}

const STATUS_CODES = {
  100: 'Continue',
  101: 'Switching Protocols',
  102: 'Processing',
  103: 'Early Hints',
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  203: 'Non-Authoritative Information',
  204: 'No Content',
  205: 'Reset Content',
  206: 'Partial Content',
  207: 'Multi-Status',
  208: 'Already Reported',
  226: 'IM Used',
  300: 'Multiple Choices',
  301: 'Moved Permanently',
  302: 'Found',
  303: 'See Other',
  304: 'Not Modified',
  305: 'Use Proxy',
  307: 'Temporary Redirect',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  407: 'Proxy Authentication Required',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  411: 'Length Required',
  412: 'Precondition Failed',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  416: 'Range Not Satisfiable',
  417: 'Expectation Failed',
  418: "I'm a Teapot",
  421: 'Misdirected Request',
  422: 'Unprocessable Entity',
  423: 'Locked',
  424: 'Failed Dependency',
  425: 'Too Early',
  426: 'Upgrade Required',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  451: 'Unavailable For Legal Reasons',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  505: 'HTTP Version Not Supported',
  506: 'Variant Also Negotiates',
  507: 'Insufficient Storage',
  508: 'Loop Detected',
  509: 'Bandwidth Limit Exceeded',
  510: 'Not Extended',
  511: 'Network Authentication Required',
};

const getHttp = lazy(function () {
  return makeHttp('http:', 80);
});
const getHttps = lazy(function () {
  return makeHttp('https:', 443);
});
function basicCredentials(auth) {
  const bytes = utf8Encode(StringCtor(auth));
  return base64Encode(bytes, 0, bytes.length, false);
}
