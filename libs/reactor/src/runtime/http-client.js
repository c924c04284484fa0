// The sandbox runtime: the modules require('http') and require('https'), client half: Agent, ClientRequest, request, get,
// METHODS and STATUS_CODES. A request is sent whole on end() through sendHttp (http.js); its response is an
// incomingMessage (http-incoming.js).
/* global ArrayIsArray, ObjectKeys, PromiseCtor, PromiseThen, STATUS_CODES, StringCtor, abortError, abortHttp,
   basicCredentials, clearTimeoutImpl, define, encodeChunk, eventEmitterClass, incomingMessage, joinBody, lazy,
   outboundError, requestOptions, sendHttp, setTimeoutImpl, tlsOptions, toBuffer */
/* exported getHttp, getHttps */

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

const getHttp = lazy(function () {
  return makeHttp('http:', 80);
});
const getHttps = lazy(function () {
  return makeHttp('https:', 443);
});
