// The sandbox runtime: WHATWG fetch, Headers, Request, Response, AbortController and AbortSignal. fetch sends through
// sendHttp (http.js): the sandbox process follows redirects (at most 5, each checked) and undoes content-encoding.
/* global ArrayIsArray, ErrorCtor, ObjectKeys, PromiseCtor, PromiseThen, StringCtor, TypeErrorCtor, U8, WeakMapCtor,
   WeakMapGet, WeakMapSet, abortError, abortHttp, asBytes, bytesForHost, callHostUrl, define,
   getUrlClasses, lazy, lazyGlobal, outboundError, sendHttp, setTimeoutImpl, toBuffer, utf8Decode, utf8Encode */
const getAbort = lazy(function () {
  const state = new WeakMapCtor();
  class AbortSignal {
    constructor() {
      throw new TypeErrorCtor('Illegal constructor');
    }
    get aborted() {
      return WeakMapGet(state, this).aborted;
    }
    get reason() {
      return WeakMapGet(state, this).reason;
    }
    throwIfAborted() {
      if (this.aborted) throw this.reason;
    }
    addEventListener(type, listener) {
      if (type === 'abort' && typeof listener === 'function') WeakMapGet(state, this).listeners.push(listener);
    }
    removeEventListener(type, listener) {
      const list = WeakMapGet(state, this).listeners;
      const at = list.indexOf(listener);
      if (at !== -1) list.splice(at, 1);
    }
    static abort(reason) {
      const s = newSignal();
      signalAbort(s, reason === undefined ? abortError() : reason);
      return s;
    }
    static timeout(ms) {
      const s = newSignal();
      setTimeoutImpl(function () {
        const e = new ErrorCtor('The operation was aborted due to timeout');
        define(e, 'name', 'TimeoutError');
        define(e, 'code', 23);
        signalAbort(s, e);
      }, +ms);
      return s;
    }
    static any(signals) {
      const s = newSignal();
      for (const other of signals) {
        if (other.aborted) {
          signalAbort(s, other.reason);
          break;
        }
        other.addEventListener('abort', function () {
          signalAbort(s, other.reason);
        });
      }
      return s;
    }
  }
  function newSignal() {
    const s = Object.create(AbortSignal.prototype);
    WeakMapSet(state, s, { aborted: false, reason: undefined, listeners: [] });
    s.onabort = null;
    return s;
  }
  function signalAbort(s, reason) {
    const st = WeakMapGet(state, s);
    if (st.aborted) return;
    st.aborted = true;
    st.reason = reason;
    const event = { type: 'abort', target: s };
    if (typeof s.onabort === 'function') s.onabort(event);
    for (const listener of st.listeners.slice()) listener.call(s, event);
  }
  class AbortController {
    constructor() {
      define(this, '_signal', newSignal());
    }
    get signal() {
      return this._signal;
    }
    abort(reason) {
      signalAbort(this._signal, reason === undefined ? abortError() : reason);
    }
  }
  return { AbortController: AbortController, AbortSignal: AbortSignal };
});

const getFetch = lazy(function () {
  const NORMALIZED = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT'];
  const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  class Headers {
    constructor(init) {
      define(this, '_list', []);
      if (init === undefined || init === null) return;
      if (init instanceof Headers) {
        for (const entry of init._list) this._list.push([entry[0], entry[1]]);
        return;
      }
      if (typeof init !== 'object') throw new TypeErrorCtor("Failed to construct 'Headers': The provided value is not of type 'HeadersInit'");
      if (typeof init[Symbol.iterator] === 'function') {
        for (const pair of init) {
          const entry = ArrayIsArray(pair) ? pair : Array.from(pair);
          if (entry.length !== 2) throw new TypeErrorCtor('Headers: each entry must be a [name, value] pair');
          this.append(entry[0], entry[1]);
        }
        return;
      }
      for (const name of ObjectKeys(init)) this.append(name, init[name]);
    }
    append(name, value) {
      const n = StringCtor(name);
      if (!HEADER_NAME.test(n)) throw new TypeErrorCtor('Headers.append: "' + n + '" is an invalid header name.');
      const v = StringCtor(value).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
      if (/[\0\r\n]/.test(v)) throw new TypeErrorCtor('Headers.append: "' + v + '" is an invalid header value.');
      this._list.push([n.toLowerCase(), v]);
    }
    set(name, value) {
      this.delete(name);
      this.append(name, value);
    }
    delete(name) {
      const key = StringCtor(name).toLowerCase();
      for (let i = this._list.length - 1; i >= 0; i--) if (this._list[i][0] === key) this._list.splice(i, 1);
    }
    get(name) {
      const key = StringCtor(name).toLowerCase();
      const values = [];
      for (const entry of this._list) if (entry[0] === key) values.push(entry[1]);
      return values.length === 0 ? null : values.join(', ');
    }
    getSetCookie() {
      return this._list
        .filter(function (e) {
          return e[0] === 'set-cookie';
        })
        .map(function (e) {
          return e[1];
        });
    }
    has(name) {
      return this.get(name) !== null;
    }
    forEach(callback, thisArg) {
      for (const entry of this.entries()) callback.call(thisArg, entry[1], entry[0], this);
    }
    *entries() {
      const names = [];
      for (const entry of this._list) if (names.indexOf(entry[0]) === -1) names.push(entry[0]);
      names.sort();
      for (const name of names) {
        if (name === 'set-cookie') for (const cookie of this.getSetCookie()) yield [name, cookie];
        else yield [name, this.get(name)];
      }
    }
    *keys() {
      for (const entry of this.entries()) yield entry[0];
    }
    *values() {
      for (const entry of this.entries()) yield entry[1];
    }
    [Symbol.iterator]() {
      return this.entries();
    }
  }

  // A body as bytes, and the content type it implies (fetch's "extract a body").
  function extractBody(body) {
    if (body === undefined || body === null) return { bytes: null, type: null };
    if (typeof body === 'string') return { bytes: utf8Encode(body), type: 'text/plain;charset=UTF-8' };
    const { URLSearchParams } = getUrlClasses();
    if (body instanceof URLSearchParams) return { bytes: utf8Encode(body.toString()), type: 'application/x-www-form-urlencoded;charset=UTF-8' };
    const b = asBytes(body);
    if (b !== null) return { bytes: bytesForHost(b), type: null };
    return { bytes: utf8Encode(StringCtor(body)), type: 'text/plain;charset=UTF-8' };
  }
  const bodies = new WeakMapCtor();
  function consume(owner) {
    const st = WeakMapGet(bodies, owner);
    if (st.used) return PromiseCtor.reject(new TypeErrorCtor('Body is unusable: Body has already been read'));
    st.used = true;
    return PromiseCtor.resolve(st.bytes === null ? new U8(0) : st.bytes);
  }
  class Body {
    get bodyUsed() {
      return WeakMapGet(bodies, this).used;
    }
    get body() {
      const st = WeakMapGet(bodies, this);
      if (st.bytes === null) return null;
      // A minimal ReadableStream: one chunk, then done.
      return {
        locked: false,
        getReader: () => {
          let done = false;
          return {
            read: () => {
              if (done) return PromiseCtor.resolve({ done: true, value: undefined });
              done = true;
              return PromiseThen(consume(this), function (bytes) {
                return { done: false, value: bytes };
              });
            },
            releaseLock: function () {},
            cancel: function () {
              return PromiseCtor.resolve();
            },
          };
        },
        [Symbol.asyncIterator]: () => {
          let done = false;
          return {
            next: () =>
              done ? PromiseCtor.resolve({ done: true, value: undefined }) : ((done = true), PromiseThen(consume(this), (value) => ({ done: false, value }))),
          };
        },
      };
    }
    arrayBuffer() {
      return PromiseThen(consume(this), function (b) {
        return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
      });
    }
    bytes() {
      return consume(this);
    }
    text() {
      return PromiseThen(consume(this), function (b) {
        return utf8Decode(stripBom(b), 0, stripBom(b).length, false);
      });
    }
    json() {
      return PromiseThen(this.text(), function (t) {
        return JSON.parse(t);
      });
    }
    buffer() {
      return PromiseThen(consume(this), function (b) {
        return toBuffer(b);
      });
    }
  }
  function stripBom(b) {
    return b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? b.subarray(3) : b;
  }

  class Request extends Body {
    constructor(input, init) {
      super();
      const o = init === undefined || init === null ? {} : init;
      const from = input instanceof Request ? input : null;
      this.url = from !== null ? from.url : callHostUrl(StringCtor(input)).href;
      let method = o.method !== undefined ? StringCtor(o.method) : from !== null ? from.method : 'GET';
      if (NORMALIZED.indexOf(method.toUpperCase()) !== -1) method = method.toUpperCase();
      this.method = method;
      this.headers = new Headers(o.headers !== undefined ? o.headers : from !== null ? from.headers : undefined);
      this.redirect = o.redirect !== undefined ? StringCtor(o.redirect) : from !== null ? from.redirect : 'follow';
      if (['follow', 'error', 'manual'].indexOf(this.redirect) === -1) throw new TypeErrorCtor("Request: redirect must be 'follow', 'error' or 'manual'");
      this.signal = o.signal !== undefined ? o.signal : from !== null ? from.signal : null;
      const extracted = o.body !== undefined ? extractBody(o.body) : { bytes: from !== null ? WeakMapGet(bodies, from).bytes : null, type: null };
      if (extracted.bytes !== null && (method === 'GET' || method === 'HEAD')) throw new TypeErrorCtor('Request with GET/HEAD method cannot have body.');
      if (extracted.type !== null && !this.headers.has('content-type')) this.headers.set('content-type', extracted.type);
      WeakMapSet(bodies, this, { bytes: extracted.bytes, used: false });
    }
    clone() {
      return new Request(this);
    }
  }

  class Response extends Body {
    constructor(body, init) {
      super();
      const o = init === undefined || init === null ? {} : init;
      const status = o.status === undefined ? 200 : +o.status;
      if (!(status >= 200 && status <= 599) || status !== Math.floor(status))
        throw new RangeError('init["status"] must be in the range of 200 to 599, inclusive.');
      this.status = status;
      this.statusText = o.statusText === undefined ? '' : StringCtor(o.statusText);
      this.headers = new Headers(o.headers);
      this.ok = status >= 200 && status <= 299;
      this.redirected = false;
      this.type = 'default';
      this.url = '';
      const extracted = extractBody(body);
      if (extracted.type !== null && !this.headers.has('content-type')) this.headers.set('content-type', extracted.type);
      WeakMapSet(bodies, this, { bytes: extracted.bytes, used: false });
    }
    clone() {
      const st = WeakMapGet(bodies, this);
      if (st.used) throw new TypeErrorCtor('Response.clone: Body has already been consumed.');
      const copy = new Response(st.bytes === null ? null : st.bytes.slice(), { status: this.status, statusText: this.statusText, headers: this.headers });
      copy.url = this.url;
      copy.redirected = this.redirected;
      copy.type = this.type;
      return copy;
    }
    static json(data, init) {
      const r = new Response(JSON.stringify(data), init);
      r.headers.set('content-type', 'application/json');
      return r;
    }
    static error() {
      const r = new Response(null, { status: 200 });
      r.type = 'error';
      r.status = 0;
      r.ok = false;
      return r;
    }
    static redirect(url, status) {
      return new Response(null, { status: status === undefined ? 302 : status, headers: { location: callHostUrl(StringCtor(url)).href } });
    }
  }

  function fetch(input, init) {
    return new PromiseCtor(function (resolve, reject) {
      const request = new Request(input, init);
      const signal = request.signal;
      if (signal && signal.aborted) throw signal.reason;
      const headers = [];
      for (const entry of request.headers._list) headers.push(entry[0], entry[1]);
      let id = null;
      let settled = false;
      const onAbort = function () {
        if (settled) return;
        settled = true;
        abortHttp(id);
        reject(signal.reason);
      };
      if (signal) signal.addEventListener('abort', onAbort);
      const out = { url: request.url, method: request.method, headers: headers, redirect: request.redirect, decode: true };
      try {
        id = sendHttp(out, WeakMapGet(bodies, request).bytes === null ? undefined : WeakMapGet(bodies, request).bytes, function (error, head, bytes) {
          if (signal) signal.removeEventListener('abort', onAbort);
          if (settled) return;
          settled = true;
          if (error !== null) {
            const failure = new TypeErrorCtor('fetch failed');
            define(failure, 'cause', error);
            reject(failure);
            return;
          }
          const raw = [];
          for (let i = 0; i + 1 < head.rawHeaders.length; i += 2) raw.push([head.rawHeaders[i], head.rawHeaders[i + 1]]);
          const nullBody = request.method === 'HEAD' || head.status === 204 || head.status === 304;
          const response = new Response(nullBody ? null : new U8(bytes), {
            status: head.status < 200 ? 200 : head.status,
            statusText: head.statusText,
            headers: raw,
          });
          response.url = head.url;
          response.redirected = head.redirected === true;
          response.type = 'basic';
          resolve(response);
        });
      } catch (e) {
        const failure = new TypeErrorCtor('fetch failed');
        define(failure, 'cause', e);
        throw failure;
      }
    });
  }
  return { fetch: fetch, Headers: Headers, Request: Request, Response: Response, outboundError: outboundError };
});

lazyGlobal('fetch', function () {
  return getFetch().fetch;
});
lazyGlobal('Headers', function () {
  return getFetch().Headers;
});
lazyGlobal('Request', function () {
  return getFetch().Request;
});
lazyGlobal('Response', function () {
  return getFetch().Response;
});
lazyGlobal('AbortController', function () {
  return getAbort().AbortController;
});
lazyGlobal('AbortSignal', function () {
  return getAbort().AbortSignal;
});
