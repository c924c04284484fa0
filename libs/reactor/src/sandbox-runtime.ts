/**
 * JavaScript evaluated inside every fresh sandbox context, before any tenant code: the Node-16-style
 * surface (console, Buffer, URL, TextEncoder, crypto, errors, svc, timers), the one-shot loader
 * that runs the tenant's module and serialises its outcome to a JSON string, and the 'invoke' control
 * op that runs the module's kept handler again on new input (later runs of the same tenant and code).
 *
 * It is a string rather than a TypeScript function so that no compiler or coverage instrumentation
 * can inject host-side references into it. Keep it free of backticks and dollar-brace sequences
 * (it lives in a String.raw template literal).
 *
 * The script evaluates to `install(host, limitsJson)`. `host(op, a, b, c)` is the single host
 * function (an isolated-vm Callback) and answers `[true, value]` or `[false, message]`; it is only
 * ever captured by closures here, never stored on a global, so a transform cannot call it directly.
 */
export const SANDBOX_RUNTIME_FILENAME = 'gatehouse:runtime';

export const SANDBOX_RUNTIME_SOURCE = String.raw`
(function install(host, limitsJson) {
  'use strict';
  const G = globalThis;
  const limits = JSON.parse(limitsJson);

  // Intrinsics captured before tenant code runs: a transform that patches builtins only breaks itself,
  // never the loader that reports its outcome.
  const uncurry = Function.prototype.call.bind.bind(Function.prototype.call);
  const FunctionCtor = Function;
  const ObjectCreate = Object.create;
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const ObjectKeys = Object.keys;
  const ObjectFreeze = Object.freeze;
  const ObjectPrototypeToString = uncurry(Object.prototype.toString);
  const ArrayIsArray = Array.isArray;
  const JSONStringify = JSON.stringify;
  const JSONParse = JSON.parse;
  const PromiseCtor = Promise;
  const PromiseResolve = Promise.resolve.bind(Promise);
  const PromiseThen = uncurry(Promise.prototype.then);
  const MapCtor = Map;
  const SetCtor = Set;
  const MapGet = uncurry(Map.prototype.get);
  const MapSet = uncurry(Map.prototype.set);
  const MapDelete = uncurry(Map.prototype.delete);
  const MapClear = uncurry(Map.prototype.clear);
  const WeakMapCtor = WeakMap;
  const WeakMapGet = uncurry(WeakMap.prototype.get);
  const WeakMapSet = uncurry(WeakMap.prototype.set);
  const StringCtor = String;
  const StringSlice = uncurry(String.prototype.slice);
  const StringFromCharCode = String.fromCharCode;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const U8 = Uint8Array;
  const MathMin = Math.min;
  const MathMax = Math.max;
  const MathFloor = Math.floor;
  const NumberIsInteger = Number.isInteger;

  function define(target, name, value) {
    ObjectDefineProperty(target, name, { value: value, writable: true, configurable: true, enumerable: false });
  }

  // Nothing a transform needs, and each widens the attack surface (JIT-compiled wasm, shared memory,
  // Atomics.wait blocking the isolate thread).
  delete G.WebAssembly;
  delete G.SharedArrayBuffer;
  delete G.Atomics;
  // V8 flags of the host process apply to every isolate: --expose-gc alone would hand transforms a
  // gc() that stalls the isolate. Standard lowercase globals are few; anything else goes (or, when
  // V8 made it non-configurable, as gc is, is overwritten).
  const STANDARD_LOWERCASE = ['globalThis', 'undefined', 'parseInt', 'parseFloat', 'isNaN', 'isFinite', 'decodeURI',
    'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'escape', 'unescape', 'eval', 'console'];
  for (const name of Object.getOwnPropertyNames(G)) {
    const first = name.charCodeAt(0);
    if (first < 97 || first > 122 || STANDARD_LOWERCASE.indexOf(name) !== -1) continue;
    if (!Reflect.deleteProperty(G, name)) {
      try { G[name] = undefined; } catch (_) { /* read-only as well: nothing more can be done */ }
    }
  }
  define(G, 'global', G);

  // ---------------------------------------------------------------- builtins that outrun the heap limit
  // isolated-vm enforces the heap limit by terminating the isolate, which V8 only notices between
  // JavaScript steps. These builtins can allocate gigabytes inside one uninterruptible call and abort
  // the whole host process (isolated-vm issues #107 and #186): their sizes are checked first, or the
  // work is done in JavaScript, where termination is noticed.
  const ReflectApply = Reflect.apply;
  const ObjectCtor = Object;
  const ArrayCtor = Array;
  const SymbolIterator = Symbol.iterator;
  const SymbolIsConcatSpreadable = Symbol.isConcatSpreadable;
  const MathTrunc = Math.trunc;
  const maxElements = limits.maxElements;
  function tooLarge(what) {
    return new RangeErrorCtor(what + ' exceeds the sandbox limit of ' + maxElements + ' elements');
  }
  function toLength(v) {
    const n = +v;
    if (!(n > 0)) return 0;
    return n === Infinity ? 9007199254740991 : MathFloor(n);
  }
  function relativeIndex(v, dflt, len) {
    if (v === undefined) return dflt;
    let n = MathTrunc(+v);
    if (n !== n) n = 0;
    return n < 0 ? MathMax(len + n, 0) : MathMin(n, len);
  }
  // The replacement keeps the builtin's name, not its exact 'length' (redefining that on every
  // function measurably slows down creating each context).
  function replaceMethod(target, key, name, impl) {
    define(target, key, { [name]: function () { return ReflectApply(impl, this, arguments); } }[name]);
  }
  // Done in JavaScript: every size is read once, and a getter cannot grow it after the check.
  replaceMethod(Array.prototype, 'fill', 'fill', function (value, start, end) {
    const O = ObjectCtor(this);
    const len = toLength(O.length);
    const from = relativeIndex(start, 0, len);
    const to = relativeIndex(end, len, len);
    if (to - from > maxElements) throw tooLarge('Array.prototype.fill');
    for (let k = from; k < to; k++) O[k] = value;
    return O;
  });
  const ArrayFrom = Array.from;
  replaceMethod(Array, 'from', 'from', function (items, mapFn, thisArg) {
    if (mapFn !== undefined && typeof mapFn !== 'function') throw new TypeErrorCtor(StringCtor(mapFn) + ' is not a function');
    if (items === null || items === undefined) throw new TypeErrorCtor('Array.from requires an array-like object');
    const out = [];
    let n = 0;
    if (typeof items === 'string' && items.length > maxElements) throw tooLarge('Array.from');
    const iterator = items[SymbolIterator];
    if (iterator !== undefined && iterator !== null) {
      for (const v of items) { out[n] = mapFn === undefined ? v : ReflectApply(mapFn, thisArg, [v, n]); n++; }
    } else {
      const O = ObjectCtor(items);
      const len = toLength(O.length);
      if (len > maxElements) throw tooLarge('Array.from');
      for (; n < len; n++) out[n] = mapFn === undefined ? O[n] : ReflectApply(mapFn, thisArg, [O[n], n]);
    }
    // A subclass receiver gets its own instance, built from the checked copy.
    return this === ArrayCtor || this === undefined || this === G ? out : ReflectApply(ArrayFrom, this, [out]);
  });
  // split honours a limit: cap it, then tell a capped result apart from a complete one.
  function guardSplit(target, key, name, what) {
    const original = target[key];
    replaceMethod(target, key, name, function (separator, limit) {
      const requested = limit === undefined ? 4294967295 : limit >>> 0;
      const parts = ReflectApply(original, this, [separator, MathMin(requested, maxElements + 1)]);
      if (parts.length > maxElements && requested > maxElements) throw tooLarge(what);
      return parts;
    });
  }
  guardSplit(String.prototype, 'split', 'split', 'String.prototype.split');
  guardSplit(RegExp.prototype, Symbol.split, '[Symbol.split]', 'RegExp split');

  // Array methods walk every index up to length inside the builtin, holes included: on a sparse
  // array of length 1e9 that is minutes of uninterruptible work. Arrays longer than a full heap are
  // refused instead. A Proxy could report one length to the check and another to the builtin, so
  // transforms get no Proxy, and array-likes are seen through one whose length is the checked one.
  const ProxyCtor = Proxy;
  const ReflectGet = Reflect.get;
  delete G.Proxy;
  function withFixedLength(O, len) {
    return new ProxyCtor(O, {
      get: function (target, key, receiver) { return key === 'length' ? len : ReflectGet(target, key, receiver); },
    });
  }
  // concat walks its arguments too, when they are arrays or spreadable array-likes.
  function concatArguments(args) {
    const out = [];
    for (let i = 0; i < args.length; i++) {
      const arg = args[i];
      if (arg !== null && typeof arg === 'object' && (ArrayIsArray(arg) || arg[SymbolIsConcatSpreadable])) {
        const len = toLength(arg.length);
        if (len > maxElements) throw tooLarge('Array.prototype.concat');
        out[i] = ArrayIsArray(arg) ? arg : withFixedLength(arg, len);
      } else {
        out[i] = arg;
      }
    }
    return out;
  }
  const ARRAY_METHODS = ['at', 'concat', 'copyWithin', 'every', 'filter', 'find', 'findIndex', 'findLast', 'findLastIndex',
    'flat', 'flatMap', 'forEach', 'includes', 'indexOf', 'join', 'lastIndexOf', 'map', 'pop', 'push', 'reduce',
    'reduceRight', 'reverse', 'shift', 'slice', 'some', 'sort', 'splice', 'toLocaleString', 'toReversed', 'toSorted',
    'toSpliced', 'toString', 'unshift', 'with'];
  for (const name of ARRAY_METHODS) {
    const original = Array.prototype[name];
    if (typeof original !== 'function') continue;
    replaceMethod(Array.prototype, name, name, function () {
      if (this === null || this === undefined) return ReflectApply(original, this, arguments);
      const args = name === 'concat' ? concatArguments(arguments) : arguments;
      const O = ObjectCtor(this);
      if (ArrayIsArray(O)) {
        if (O.length > maxElements) throw tooLarge('Array.prototype.' + name);
        return ReflectApply(original, O, args);
      }
      const len = toLength(O.length);
      if (len > maxElements) throw tooLarge('Array.prototype.' + name);
      const view = withFixedLength(O, len);
      const result = ReflectApply(original, view, args);
      return result === view ? O : result;
    });
  }
  // Strings a builtin would build in one allocation, far beyond the heap.
  const maxStringLength = limits.maxStringLength;
  const StringRepeat = String.prototype.repeat;
  replaceMethod(String.prototype, 'repeat', 'repeat', function (count) {
    const str = StringCtor(this);
    const n = MathTrunc(+count) || 0;
    if (str.length * n > maxStringLength) throw new RangeErrorCtor('Invalid string length');
    return ReflectApply(StringRepeat, str, [n]);
  });
  for (const name of ['padStart', 'padEnd']) {
    const original = String.prototype[name];
    replaceMethod(String.prototype, name, name, function (maxLength, fill) {
      const n = toLength(maxLength);
      if (n > maxStringLength) throw new RangeErrorCtor('Invalid string length');
      return ReflectApply(original, this, [n, fill]);
    });
  }
  // Filling a collection from an iterable in JavaScript rather than in one builtin call.
  function guardCollection(Base, keyed) {
    const adderName = keyed ? 'set' : 'add';
    const Guarded = {
      [Base.name]: class extends Base {
        constructor(iterable) {
          super();
          if (iterable === undefined || iterable === null) return;
          const adder = this[adderName];
          if (typeof adder !== 'function') throw new TypeErrorCtor("'" + adderName + "' is not a function");
          for (const item of iterable) {
            if (!keyed) { ReflectApply(adder, this, [item]); continue; }
            if (item === null || (typeof item !== 'object' && typeof item !== 'function')) {
              throw new TypeErrorCtor('Iterator value ' + StringCtor(item) + ' is not an entry object');
            }
            ReflectApply(adder, this, [item[0], item[1]]);
          }
        }
      },
    }[Base.name];
    define(G, Base.name, Guarded);
  }
  guardCollection(Set, false);
  guardCollection(WeakSet, false);
  guardCollection(Map, true);
  guardCollection(WeakMap, true);
  // Growing a Map or Set near the heap limit makes V8 fail the allocation of its next hash table
  // outright, which isolated-vm can only answer by parking the isolate's thread for good (measured:
  // a Set of integers in a 64 MiB isolate). Far below that size, entries are refused instead.
  const maxCollectionEntries = limits.maxCollectionEntries;
  for (const spec of [[MapCtor.prototype, 'set'], [SetCtor.prototype, 'add']]) {
    const proto = spec[0], key = spec[1];
    const original = proto[key];
    const has = proto.has;
    const size = ObjectGetOwnPropertyDescriptor(proto, 'size').get;
    replaceMethod(proto, key, key, function (k) {
      if (ReflectApply(size, this, []) >= maxCollectionEntries && !ReflectApply(has, this, [k])) {
        throw new RangeErrorCtor((key === 'set' ? 'Map' : 'Set') + ' exceeds the sandbox limit of ' + maxCollectionEntries + ' entries');
      }
      return ReflectApply(original, this, arguments);
    });
  }

  function callHost(op, a, b, c, ErrorType) {
    const r = host(op, a, b, c);
    if (r[0] === true) return r[1];
    throw new (ErrorType || ErrorCtor)(r[1]);
  }

  // Most contexts run few invocations, and most transforms touch few of these globals: each class is
  // built on first access, which keeps a fresh context cheap (measured: about half of its cost).
  function lazy(factory) {
    let value = null;
    return function () { return value === null ? (value = factory()) : value; };
  }
  function lazyGlobal(name, get) {
    ObjectDefineProperty(G, name, {
      configurable: true,
      enumerable: false,
      get: function () { const v = get(); define(G, name, v); return v; },
      set: function (v) { define(G, name, v); },
    });
  }

  // ---------------------------------------------------------------- errors a transform may throw
  // Classes built so far, with their status: only these can have been thrown.
  const proxyErrorInfo = new MapCtor();
  const proxyErrorClasses = [];
  const proxyErrorGetters = {};
  for (const spec of limits.proxyErrors) {
    const name = spec.name;
    const status = spec.status;
    proxyErrorGetters[name] = lazy(function () {
      const C = ({ [name]: class extends ErrorCtor {
        constructor(message, errors) {
          super(message === undefined ? '' : message);
          define(this, 'status', status);
          define(this, 'errors', errors === undefined || errors === null ? {} : errors);
        }
      } })[name];
      define(C.prototype, 'name', name);
      MapSet(proxyErrorInfo, C, { title: name, status: status });
      proxyErrorClasses.push(C);
      return C;
    });
    lazyGlobal(name, proxyErrorGetters[name]);
  }
  function runtimeError(message) {
    return new (proxyErrorGetters.ReactorRuntimeError())(message);
  }

  let CustomHttpResponseClass = null;
  const getCustomHttpResponseError = lazy(function () {
    class CustomHttpResponseError extends ErrorCtor {
      constructor(response) {
        const r = response === null || typeof response !== 'object' ? {} : response;
        super('Custom HTTP response with status ' + r.status);
        define(this, 'status', r.status);
        define(this, 'headers', r.headers === undefined || r.headers === null ? {} : r.headers);
        define(this, 'body', r.body);
      }
    }
    define(CustomHttpResponseError.prototype, 'name', 'CustomHttpResponseError');
    CustomHttpResponseClass = CustomHttpResponseError;
    return CustomHttpResponseError;
  });
  lazyGlobal('CustomHttpResponseError', getCustomHttpResponseError);

  function describe(e) {
    try {
      if (e !== null && (typeof e === 'object' || typeof e === 'function')) {
        const m = e.message;
        if (typeof m === 'string') return m;
      }
      return StringCtor(e);
    } catch (_) {
      return 'The transform threw a value that cannot be described';
    }
  }

  // ---------------------------------------------------------------- byte encodings
  function utf8Encode(str) {
    const s = StringCtor(str);
    const n = s.length;
    let size = 0;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) size += 1;
      else if (c < 0x800) size += 2;
      else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) { size += 4; i++; }
      else size += 3;
    }
    const out = new U8(size);
    let p = 0;
    for (let i = 0; i < n; i++) {
      let c = s.charCodeAt(i);
      if (c < 0x80) { out[p++] = c; continue; }
      if (c < 0x800) { out[p++] = 0xc0 | (c >> 6); out[p++] = 0x80 | (c & 63); continue; }
      if (c >= 0xd800 && c <= 0xdfff) {
        if (c <= 0xdbff && i + 1 < n && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
          c = 0x10000 + ((c - 0xd800) << 10) + (s.charCodeAt(++i) - 0xdc00);
          out[p++] = 0xf0 | (c >> 18); out[p++] = 0x80 | ((c >> 12) & 63);
          out[p++] = 0x80 | ((c >> 6) & 63); out[p++] = 0x80 | (c & 63);
          continue;
        }
        c = 0xfffd;
      }
      out[p++] = 0xe0 | (c >> 12); out[p++] = 0x80 | ((c >> 6) & 63); out[p++] = 0x80 | (c & 63);
    }
    return out;
  }

  function codeUnitsToString(units, length) {
    let s = '';
    for (let i = 0; i < length; i += 8192) {
      s += StringFromCharCode.apply(null, units.subarray(i, MathMin(length, i + 8192)));
    }
    return s;
  }

  // WHATWG UTF-8 decode: each maximal invalid subpart becomes one U+FFFD (or a TypeError if fatal).
  function utf8Decode(bytes, start, end, fatal) {
    const units = new Uint16Array(end - start);
    let n = 0;
    let i = start;
    while (i < end) {
      const b = bytes[i];
      if (b < 0x80) { units[n++] = b; i++; continue; }
      let need = 0, cp = 0, lower = 0x80, upper = 0xbf;
      if (b >= 0xc2 && b <= 0xdf) { need = 1; cp = b & 0x1f; }
      else if (b >= 0xe0 && b <= 0xef) { need = 2; cp = b & 0xf; if (b === 0xe0) lower = 0xa0; if (b === 0xed) upper = 0x9f; }
      else if (b >= 0xf0 && b <= 0xf4) { need = 3; cp = b & 7; if (b === 0xf0) lower = 0x90; if (b === 0xf4) upper = 0x8f; }
      else {
        if (fatal) throw new TypeErrorCtor('The encoded data was not valid for encoding utf-8');
        units[n++] = 0xfffd; i++; continue;
      }
      let j = i + 1, ok = true;
      for (let k = 0; k < need; k++, j++) {
        const c = j < end ? bytes[j] : -1;
        if (c < lower || c > upper) { ok = false; break; }
        lower = 0x80; upper = 0xbf;
        cp = (cp << 6) | (c & 63);
      }
      if (!ok) {
        if (fatal) throw new TypeErrorCtor('The encoded data was not valid for encoding utf-8');
        units[n++] = 0xfffd; i = j; continue;
      }
      if (cp >= 0x10000) {
        cp -= 0x10000;
        units[n++] = 0xd800 + (cp >> 10);
        units[n++] = 0xdc00 + (cp & 0x3ff);
      } else {
        units[n++] = cp;
      }
      i = j;
    }
    return codeUnitsToString(units, n);
  }

  // Length of a trailing incomplete (but so far valid) UTF-8 sequence, kept back when streaming.
  function utf8IncompleteTail(bytes) {
    const n = bytes.length;
    for (let back = 1; back <= MathMin(3, n); back++) {
      const b = bytes[n - back];
      if ((b & 0xc0) === 0x80) continue;
      const need = b >= 0xf0 && b <= 0xf4 ? 4 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xc2 && b <= 0xdf ? 2 : 1;
      return need > back ? back : 0;
    }
    return 0;
  }

  function latin1Encode(str) {
    const s = StringCtor(str);
    const out = new U8(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i) & 0xff;
    return out;
  }
  function latin1Decode(bytes, start, end, mask) {
    const units = new Uint16Array(end - start);
    for (let i = start; i < end; i++) units[i - start] = bytes[i] & mask;
    return codeUnitsToString(units, end - start);
  }
  function utf16leEncode(str) {
    const s = StringCtor(str);
    const out = new U8(s.length * 2);
    for (let i = 0; i < s.length; i++) { const c = s.charCodeAt(i); out[2 * i] = c & 0xff; out[2 * i + 1] = c >> 8; }
    return out;
  }
  function utf16leDecode(bytes, start, end) {
    const len = (end - start) >> 1;
    const units = new Uint16Array(len);
    for (let i = 0; i < len; i++) units[i] = bytes[start + 2 * i] | (bytes[start + 2 * i + 1] << 8);
    return codeUnitsToString(units, len);
  }

  const HEX = '0123456789abcdef';
  function hexEncode(bytes, start, end) {
    let s = '';
    for (let i = start; i < end; i++) s += HEX[bytes[i] >> 4] + HEX[bytes[i] & 15];
    return s;
  }
  function hexValue(c) {
    if (c >= 48 && c <= 57) return c - 48;
    if (c >= 97 && c <= 102) return c - 87;
    if (c >= 65 && c <= 70) return c - 55;
    return -1;
  }
  function hexDecode(str) {
    const s = StringCtor(str);
    const out = new U8(s.length >> 1);
    let n = 0;
    for (let i = 0; i + 1 < s.length; i += 2) {
      const hi = hexValue(s.charCodeAt(i)), lo = hexValue(s.charCodeAt(i + 1));
      if (hi < 0 || lo < 0) break;
      out[n++] = (hi << 4) | lo;
    }
    return out.subarray(0, n);
  }

  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const B64_LOOKUP = new Int16Array(128).fill(-1);
  for (let i = 0; i < 64; i++) { B64_LOOKUP[B64.charCodeAt(i)] = i; B64_LOOKUP[B64URL.charCodeAt(i)] = i; }
  function base64Encode(bytes, start, end, url) {
    const table = url ? B64URL : B64;
    let s = '';
    let i = start;
    for (; i + 2 < end; i += 3) {
      const v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
      s += table[v >> 18] + table[(v >> 12) & 63] + table[(v >> 6) & 63] + table[v & 63];
    }
    const rest = end - i;
    if (rest === 1) {
      const v = bytes[i] << 16;
      s += table[v >> 18] + table[(v >> 12) & 63] + (url ? '' : '==');
    } else if (rest === 2) {
      const v = (bytes[i] << 16) | (bytes[i + 1] << 8);
      s += table[v >> 18] + table[(v >> 12) & 63] + table[(v >> 6) & 63] + (url ? '' : '=');
    }
    return s;
  }
  // Node's lenient decoder: skips characters outside the alphabet, stops at the first '='.
  function base64Decode(str) {
    const s = StringCtor(str);
    const out = new U8(((s.length + 3) >> 2) * 3);
    let n = 0, acc = 0, bits = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c === 61) break;
      const v = c < 128 ? B64_LOOKUP[c] : -1;
      if (v < 0) continue;
      acc = (acc << 6) | v;
      bits += 6;
      if (bits >= 8) { bits -= 8; out[n++] = (acc >> bits) & 0xff; }
    }
    return out.subarray(0, n);
  }

  const ENCODINGS = {
    'utf8': 'utf8', 'utf-8': 'utf8', 'hex': 'hex', 'base64': 'base64', 'base64url': 'base64url',
    'latin1': 'latin1', 'binary': 'latin1', 'ascii': 'ascii',
    'utf16le': 'utf16le', 'utf-16le': 'utf16le', 'ucs2': 'utf16le', 'ucs-2': 'utf16le',
  };
  function normalizeEncoding(enc) {
    if (enc === undefined || enc === null || enc === '') return 'utf8';
    const e = ENCODINGS[StringCtor(enc).toLowerCase()];
    if (!e) throw new TypeErrorCtor('Unknown encoding: ' + enc);
    return e;
  }
  function encodeString(str, enc) {
    switch (normalizeEncoding(enc)) {
      case 'utf8': return utf8Encode(str);
      case 'hex': return hexDecode(str);
      case 'base64': case 'base64url': return base64Decode(str);
      case 'latin1': case 'ascii': return latin1Encode(str);
      case 'utf16le': return utf16leEncode(str);
    }
  }
  function decodeBytes(bytes, enc, start, end) {
    switch (normalizeEncoding(enc)) {
      case 'utf8': return utf8Decode(bytes, start, end, false);
      case 'hex': return hexEncode(bytes, start, end);
      case 'base64': return base64Encode(bytes, start, end, false);
      case 'base64url': return base64Encode(bytes, start, end, true);
      case 'latin1': return latin1Decode(bytes, start, end, 0xff);
      case 'ascii': return latin1Decode(bytes, start, end, 0x7f);
      case 'utf16le': return utf16leDecode(bytes, start, end);
    }
  }

  // Any binary-ish input as a Uint8Array view over the same memory.
  function asBytes(value) {
    if (value instanceof U8) return value;
    if (value instanceof ArrayBuffer) return new U8(value);
    if (ArrayBuffer.isView(value)) return new U8(value.buffer, value.byteOffset, value.byteLength);
    return null;
  }
  // An exact-size copy, so the host never receives a larger underlying ArrayBuffer than was meant.
  function bytesForHost(view) {
    const copy = new U8(view.byteLength);
    copy.set(view);
    return copy;
  }

  // ---------------------------------------------------------------- Buffer (Node-like subset)
  function clampIndex(v, dflt, len) {
    if (v === undefined) return dflt;
    let n = MathFloor(+v);
    if (n !== n) n = 0;
    if (n < 0) n = MathMax(0, len + n);
    return MathMin(n, len);
  }

  let BufferClass = null;
  const getBuffer = lazy(function makeBuffer() {
    class Buffer extends U8 {
      static from(value, encodingOrOffset, length) {
        if (typeof value === 'string') return toBuffer(encodeString(value, encodingOrOffset));
        if (value instanceof ArrayBuffer) {
          const offset = encodingOrOffset === undefined ? 0 : encodingOrOffset >>> 0;
          const len = length === undefined ? value.byteLength - offset : length >>> 0;
          return new Buffer(value, offset, len);
        }
        if (value instanceof U8) { const b = new Buffer(value.length); b.set(value); return b; }
        if (value !== null && typeof value === 'object') {
          if (value.type === 'Buffer' && ArrayIsArray(value.data)) return Buffer.from(value.data);
          if (typeof value.length === 'number' || ArrayBuffer.isView(value)) {
            const len = value.length >>> 0;
            const b = new Buffer(len);
            for (let i = 0; i < len; i++) b[i] = value[i] & 0xff;
            return b;
          }
          if (typeof value.valueOf === 'function') {
            const prim = value.valueOf();
            if (prim !== value && (typeof prim === 'string' || typeof prim === 'object')) return Buffer.from(prim, encodingOrOffset, length);
          }
        }
        throw new TypeErrorCtor('The first argument must be of type string or an instance of Buffer, ArrayBuffer, or Array or an Array-like Object.');
      }
      static alloc(size, fill, encoding) {
        const b = new Buffer(checkSize(size));
        if (fill !== undefined && fill !== 0) b.fill(fill, 0, b.length, encoding);
        return b;
      }
      static allocUnsafe(size) { return new Buffer(checkSize(size)); }
      static allocUnsafeSlow(size) { return new Buffer(checkSize(size)); }
      static isBuffer(obj) { return obj instanceof Buffer; }
      static isEncoding(enc) { return typeof enc === 'string' && ENCODINGS[enc.toLowerCase()] !== undefined; }
      static byteLength(value, encoding) {
        if (typeof value === 'string') return encodeString(value, encoding).length;
        const bytes = asBytes(value);
        if (bytes) return bytes.byteLength;
        throw new TypeErrorCtor('The "string" argument must be of type string or an instance of Buffer or ArrayBuffer.');
      }
      static concat(list, totalLength) {
        if (!ArrayIsArray(list)) throw new TypeErrorCtor('The "list" argument must be an instance of Array.');
        let total = 0;
        for (const item of list) {
          const bytes = asBytes(item);
          if (!bytes) throw new TypeErrorCtor('The "list" argument must contain only Buffer or Uint8Array instances.');
          total += bytes.length;
        }
        if (totalLength !== undefined) total = checkSize(totalLength);
        const out = new Buffer(total);
        let p = 0;
        for (const item of list) {
          if (p >= total) break;
          const bytes = asBytes(item);
          const n = MathMin(bytes.length, total - p);
          out.set(n === bytes.length ? bytes : bytes.subarray(0, n), p);
          p += n;
        }
        return out;
      }
      static compare(a, b) { return compareBytes(asBytes(a), asBytes(b)); }

      toString(encoding, start, end) {
        const s = clampIndex(start, 0, this.length);
        const e = clampIndex(end, this.length, this.length);
        return e <= s ? '' : decodeBytes(this, encoding, s, e);
      }
      toJSON() { return { type: 'Buffer', data: Array.from(this) }; }
      equals(other) {
        const b = asBytes(other);
        if (!b) throw new TypeErrorCtor('The "otherBuffer" argument must be an instance of Buffer or Uint8Array.');
        return compareBytes(this, b) === 0;
      }
      compare(other) { return compareBytes(this, asBytes(other)); }
      slice(start, end) { return this.subarray(start, end); }
      copy(target, targetStart, sourceStart, sourceEnd) {
        const t = asBytes(target);
        const ts = targetStart === undefined ? 0 : targetStart >>> 0;
        const ss = sourceStart === undefined ? 0 : sourceStart >>> 0;
        const se = sourceEnd === undefined ? this.length : MathMin(sourceEnd >>> 0, this.length);
        if (ts >= t.length || ss >= se) return 0;
        const n = MathMin(se - ss, t.length - ts);
        t.set(this.subarray(ss, ss + n), ts);
        return n;
      }
      write(string, offset, length, encoding) {
        if (typeof offset === 'string') { encoding = offset; offset = 0; length = undefined; }
        else if (typeof length === 'string') { encoding = length; length = undefined; }
        const o = offset === undefined ? 0 : offset >>> 0;
        const bytes = encodeString(string, encoding);
        const n = MathMin(bytes.length, this.length - o, length === undefined ? Infinity : length >>> 0);
        if (n > 0) this.set(bytes.subarray(0, n), o);
        return MathMax(0, n);
      }
      fill(value, offset, end, encoding) {
        if (typeof offset === 'string') { encoding = offset; offset = 0; end = this.length; }
        else if (typeof end === 'string') { encoding = end; end = this.length; }
        const s = offset === undefined ? 0 : MathMin(offset >>> 0, this.length);
        const e = end === undefined ? this.length : MathMin(end >>> 0, this.length);
        if (typeof value === 'number') { U8.prototype.fill.call(this, value & 0xff, s, e); return this; }
        const bytes = typeof value === 'string' ? encodeString(value, encoding) : asBytes(value);
        if (!bytes || bytes.length === 0) { U8.prototype.fill.call(this, 0, s, e); return this; }
        for (let i = s, j = 0; i < e; i++, j = (j + 1) % bytes.length) this[i] = bytes[j];
        return this;
      }
      indexOf(value, byteOffset, encoding) {
        if (typeof value === 'number') return U8.prototype.indexOf.call(this, value & 0xff, byteOffset);
        const needle = typeof value === 'string' ? encodeString(value, encoding) : asBytes(value);
        if (!needle) throw new TypeErrorCtor('The "value" argument must be one of type number, string, Buffer or Uint8Array.');
        const from = clampIndex(byteOffset, 0, this.length);
        outer: for (let i = from; i + needle.length <= this.length; i++) {
          for (let j = 0; j < needle.length; j++) if (this[i + j] !== needle[j]) continue outer;
          return i;
        }
        return -1;
      }
      includes(value, byteOffset, encoding) { return this.indexOf(value, byteOffset, encoding) !== -1; }
    }

    // Fixed-width integer readers and writers: readUInt16BE, writeInt32LE, and so on.
    const INT_ACCESSORS = [
      ['UInt8', 1, 'Uint8'], ['Int8', 1, 'Int8'], ['UInt16', 2, 'Uint16'], ['Int16', 2, 'Int16'],
      ['UInt32', 4, 'Uint32'], ['Int32', 4, 'Int32'], ['Float', 4, 'Float32'], ['Double', 8, 'Float64'],
      ['BigUInt64', 8, 'BigUint64'], ['BigInt64', 8, 'BigInt64'],
    ];
    for (const spec of INT_ACCESSORS) {
      const name = spec[0], size = spec[1], dv = spec[2];
      const ends = size === 1 ? [''] : ['BE', 'LE'];
      for (const endian of ends) {
        const little = endian === 'LE';
        const read = function (offset) {
          const o = offset === undefined ? 0 : offset;
          if (!NumberIsInteger(o) || o < 0 || o + size > this.length) throw new RangeErrorCtor('The value of "offset" is out of range.');
          return new DataView(this.buffer, this.byteOffset, this.byteLength)['get' + dv](o, little);
        };
        const write = function (value, offset) {
          const o = offset === undefined ? 0 : offset;
          if (!NumberIsInteger(o) || o < 0 || o + size > this.length) throw new RangeErrorCtor('The value of "offset" is out of range.');
          new DataView(this.buffer, this.byteOffset, this.byteLength)['set' + dv](o, value, little);
          return o + size;
        };
        define(Buffer.prototype, 'read' + name + endian, read);
        define(Buffer.prototype, 'write' + name + endian, write);
        if (name[0] === 'U' || name[0] === 'B' && name[3] === 'U') {
          const alias = name.replace('UInt', 'Uint');
          define(Buffer.prototype, 'read' + alias + endian, read);
          define(Buffer.prototype, 'write' + alias + endian, write);
        }
      }
    }
    BufferClass = Buffer;
    return Buffer;
  });

  function checkSize(size) {
    if (typeof size !== 'number' || !(size >= 0) || size > limits.maxBufferLength || size !== size) {
      throw new RangeErrorCtor('The value of "size" is out of range.');
    }
    return MathFloor(size);
  }
  function toBuffer(bytes) { const Buffer = getBuffer(); return new Buffer(bytes.buffer, bytes.byteOffset, bytes.byteLength); }
  function compareBytes(a, b) {
    if (!a || !b) throw new TypeErrorCtor('The arguments must be Buffer or Uint8Array instances.');
    const n = MathMin(a.length, b.length);
    for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
    return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
  }
  lazyGlobal('Buffer', getBuffer);

  // ---------------------------------------------------------------- TextEncoder / TextDecoder
  const getTextEncoder = lazy(function () {
    class TextEncoder {
      get encoding() { return 'utf-8'; }
      encode(input) { return utf8Encode(input === undefined ? '' : input); }
      encodeInto(source, destination) {
        const bytes = utf8Encode(source);
        let written = 0, read = 0;
        const s = StringCtor(source);
        // Only whole code points are written, as the spec requires.
        for (let i = 0; i < s.length; i++) {
          const c = s.charCodeAt(i);
          const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
          const size = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
          if (written + size > destination.length) break;
          for (let k = 0; k < size; k++) destination[written + k] = bytes[written + k];
          written += size;
          read += pair ? 2 : 1;
          if (pair) i++;
        }
        return { read: read, written: written };
      }
    }
    return TextEncoder;
  });
  const DECODER_LABELS = {
    'utf-8': 'utf-8', 'utf8': 'utf-8', 'unicode-1-1-utf-8': 'utf-8',
    'utf-16le': 'utf-16le', 'utf-16': 'utf-16le',
    'latin1': 'windows-1252', 'iso-8859-1': 'windows-1252', 'windows-1252': 'windows-1252', 'ascii': 'windows-1252', 'us-ascii': 'windows-1252',
  };
  const decoderState = new WeakMapCtor();
  const getTextDecoder = lazy(function () {
    class TextDecoder {
      constructor(label, options) {
        const key = label === undefined ? 'utf-8' : StringCtor(label).trim().toLowerCase();
        const encoding = DECODER_LABELS[key];
        if (!encoding) throw new RangeErrorCtor('The "' + label + '" encoding is not supported');
        const o = options || {};
        WeakMapSet(decoderState, this, { encoding: encoding, fatal: !!o.fatal, ignoreBOM: !!o.ignoreBOM, pending: null, started: false });
      }
      get encoding() { return WeakMapGet(decoderState, this).encoding; }
      get fatal() { return WeakMapGet(decoderState, this).fatal; }
      get ignoreBOM() { return WeakMapGet(decoderState, this).ignoreBOM; }
      decode(input, options) {
        const st = WeakMapGet(decoderState, this);
        let bytes = input === undefined ? new U8(0) : asBytes(input);
        if (!bytes) throw new TypeErrorCtor('The "input" argument must be an instance of ArrayBuffer or ArrayBufferView.');
        const stream = !!(options && options.stream);
        if (st.pending) { const joined = new U8(st.pending.length + bytes.length); joined.set(st.pending); joined.set(bytes, st.pending.length); bytes = joined; st.pending = null; }
        let end = bytes.length;
        if (stream && st.encoding === 'utf-8') end -= utf8IncompleteTail(bytes);
        if (stream && st.encoding === 'utf-16le') end -= end & 1;
        if (end < bytes.length) st.pending = bytes.slice(end);
        let start = 0;
        if (!st.started && !st.ignoreBOM) {
          if (st.encoding === 'utf-8' && end >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3;
          if (st.encoding === 'utf-16le' && end >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) start = 2;
        }
        if (end > 0) st.started = true;
        if (!stream) st.started = false;
        if (st.encoding === 'utf-8') return utf8Decode(bytes, start, end, st.fatal);
        if (st.encoding === 'utf-16le') return utf16leDecode(bytes, start, end);
        return latin1Decode(bytes, start, end, 0xff);
      }
    }
    return TextDecoder;
  });
  lazyGlobal('TextEncoder', getTextEncoder);
  lazyGlobal('TextDecoder', getTextDecoder);

  // ---------------------------------------------------------------- atob / btoa
  function invalidCharacter(message) {
    const e = new ErrorCtor(message);
    define(e, 'name', 'InvalidCharacterError');
    return e;
  }
  define(G, 'btoa', function btoa(data) {
    if (arguments.length === 0) throw new TypeErrorCtor('The "data" argument must be specified');
    const s = StringCtor(data);
    for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0xff) throw invalidCharacter('Invalid character');
    const bytes = latin1Encode(s);
    return base64Encode(bytes, 0, bytes.length, false);
  });
  define(G, 'atob', function atob(data) {
    if (arguments.length === 0) throw new TypeErrorCtor('The "data" argument must be specified');
    let s = StringCtor(data).replace(/[\t\n\f\r ]/g, '');
    if (s.length % 4 === 0) s = s.replace(/==?$/, '');
    if (s.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(s)) throw invalidCharacter('The string to be decoded is not correctly encoded.');
    const bytes = base64Decode(s);
    return latin1Decode(bytes, 0, bytes.length, 0xff);
  });

  // ---------------------------------------------------------------- URLSearchParams / URL
  // application/x-www-form-urlencoded, as the URL standard defines it.
  function percentDecodeToString(s) {
    const bytes = utf8Encode(s);
    const out = new U8(bytes.length);
    let n = 0;
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      if (b === 0x25 && i + 2 < bytes.length) {
        const hi = hexValue(bytes[i + 1]), lo = hexValue(bytes[i + 2]);
        if (hi >= 0 && lo >= 0) { out[n++] = (hi << 4) | lo; i += 2; continue; }
      }
      out[n++] = b;
    }
    return utf8Decode(out, 0, n, false);
  }
  function parseFormUrlencoded(input) {
    const list = [];
    for (const part of StringCtor(input).split('&')) {
      if (part === '') continue;
      const eq = part.indexOf('=');
      const name = eq === -1 ? part : StringSlice(part, 0, eq);
      const value = eq === -1 ? '' : StringSlice(part, eq + 1);
      list.push([percentDecodeToString(name.replace(/\+/g, ' ')), percentDecodeToString(value.replace(/\+/g, ' '))]);
    }
    return list;
  }
  function formEncode(s) {
    const bytes = utf8Encode(s);
    let out = '';
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      if (b === 0x20) out += '+';
      else if (b === 0x2a || b === 0x2d || b === 0x2e || b === 0x5f || (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a)) out += StringFromCharCode(b);
      else out += '%' + HEX[b >> 4].toUpperCase() + HEX[b & 15].toUpperCase();
    }
    return out;
  }
  function serializeFormUrlencoded(list) {
    let out = '';
    for (let i = 0; i < list.length; i++) out += (i ? '&' : '') + formEncode(list[i][0]) + '=' + formEncode(list[i][1]);
    return out;
  }

  const getUrlClasses = lazy(function () {
    const paramsState = new WeakMapCtor();
    function paramsOf(self) {
      const st = WeakMapGet(paramsState, self);
      if (!st) throw new TypeErrorCtor('Value of "this" must be of type URLSearchParams');
      return st;
    }
    function paramsChanged(st) {
      if (st.url) setUrlPart(st.url, 'search', serializeFormUrlencoded(st.list), true);
    }
    class URLSearchParams {
      constructor(init) {
        const st = { list: [], url: null };
        WeakMapSet(paramsState, this, st);
        if (init === undefined || init === null) return;
        if (typeof init === 'object' || typeof init === 'function') {
          const other = WeakMapGet(paramsState, init);
          if (other) { st.list = other.list.map((p) => [p[0], p[1]]); return; }
          if (typeof init[Symbol.iterator] === 'function') {
            for (const pair of init) {
              const p = Array.from(pair);
              if (p.length !== 2) throw new TypeErrorCtor('Each query pair must be an iterable [name, value] tuple');
              st.list.push([StringCtor(p[0]), StringCtor(p[1])]);
            }
          } else {
            for (const key of ObjectKeys(init)) st.list.push([key, StringCtor(init[key])]);
          }
          return;
        }
        let s = StringCtor(init);
        if (s[0] === '?') s = StringSlice(s, 1);
        st.list = parseFormUrlencoded(s);
      }
      get size() { return paramsOf(this).list.length; }
      append(name, value) { const st = paramsOf(this); st.list.push([StringCtor(name), StringCtor(value)]); paramsChanged(st); }
      delete(name, value) {
        const st = paramsOf(this);
        const n = StringCtor(name);
        st.list = st.list.filter((p) => !(p[0] === n && (value === undefined || p[1] === StringCtor(value))));
        paramsChanged(st);
      }
      get(name) { const n = StringCtor(name); const p = paramsOf(this).list.find((q) => q[0] === n); return p ? p[1] : null; }
      getAll(name) { const n = StringCtor(name); return paramsOf(this).list.filter((q) => q[0] === n).map((q) => q[1]); }
      has(name, value) {
        const n = StringCtor(name);
        return paramsOf(this).list.some((q) => q[0] === n && (value === undefined || q[1] === StringCtor(value)));
      }
      set(name, value) {
        const st = paramsOf(this);
        const n = StringCtor(name), v = StringCtor(value);
        const i = st.list.findIndex((q) => q[0] === n);
        if (i === -1) st.list.push([n, v]);
        else { st.list[i][1] = v; st.list = st.list.filter((q, j) => j <= i || q[0] !== n); }
        paramsChanged(st);
      }
      sort() {
        const st = paramsOf(this);
        st.list = st.list.map((p, i) => [p, i]).sort((a, b) => (a[0][0] < b[0][0] ? -1 : a[0][0] > b[0][0] ? 1 : a[1] - b[1])).map((x) => x[0]);
        paramsChanged(st);
      }
      forEach(callback, thisArg) {
        const st = paramsOf(this);
        for (let i = 0; i < st.list.length; i++) callback.call(thisArg, st.list[i][1], st.list[i][0], this);
      }
      *entries() { const st = paramsOf(this); for (let i = 0; i < st.list.length; i++) yield [st.list[i][0], st.list[i][1]]; }
      *keys() { for (const p of this.entries()) yield p[0]; }
      *values() { for (const p of this.entries()) yield p[1]; }
      [Symbol.iterator]() { return this.entries(); }
      toString() { return serializeFormUrlencoded(paramsOf(this).list); }
      get [Symbol.toStringTag]() { return 'URLSearchParams'; }
    }

    // Parsing and component setters go to the host's WHATWG URL implementation (exact Node semantics
    // without shipping a URL parser and its IDNA tables into every context).
    const urlState = new WeakMapCtor();
    function urlOf(self) {
      const st = WeakMapGet(urlState, self);
      if (!st) throw new TypeErrorCtor('Value of "this" must be of type URL');
      return st;
    }
    function setUrlPart(self, part, value, fromParams) {
      const st = urlOf(self);
      st.rec = callHost('urlSet', st.rec.href, part, StringCtor(value), TypeErrorCtor);
      if (!fromParams && st.params && (part === 'search' || part === 'href')) {
        WeakMapGet(paramsState, st.params).list = parseFormUrlencoded(StringSlice(st.rec.search, 1));
      }
    }
    class URL {
      constructor(url, base) {
        if (arguments.length === 0) throw new TypeErrorCtor('The "url" argument must be specified');
        const rec = callHost('url', StringCtor(url), base === undefined ? undefined : StringCtor(base), undefined, TypeErrorCtor);
        WeakMapSet(urlState, this, { rec: rec, params: null });
      }
      static canParse(url, base) {
        return host('url', StringCtor(url), base === undefined ? undefined : StringCtor(base))[0] === true;
      }
      get href() { return urlOf(this).rec.href; }
      set href(v) { setUrlPart(this, 'href', v, false); }
      get origin() { return urlOf(this).rec.origin; }
      get protocol() { return urlOf(this).rec.protocol; }
      set protocol(v) { setUrlPart(this, 'protocol', v, false); }
      get username() { return urlOf(this).rec.username; }
      set username(v) { setUrlPart(this, 'username', v, false); }
      get password() { return urlOf(this).rec.password; }
      set password(v) { setUrlPart(this, 'password', v, false); }
      get host() { return urlOf(this).rec.host; }
      set host(v) { setUrlPart(this, 'host', v, false); }
      get hostname() { return urlOf(this).rec.hostname; }
      set hostname(v) { setUrlPart(this, 'hostname', v, false); }
      get port() { return urlOf(this).rec.port; }
      set port(v) { setUrlPart(this, 'port', v, false); }
      get pathname() { return urlOf(this).rec.pathname; }
      set pathname(v) { setUrlPart(this, 'pathname', v, false); }
      get search() { return urlOf(this).rec.search; }
      set search(v) { setUrlPart(this, 'search', v, false); }
      get hash() { return urlOf(this).rec.hash; }
      set hash(v) { setUrlPart(this, 'hash', v, false); }
      get searchParams() {
        const st = urlOf(this);
        if (!st.params) {
          st.params = new URLSearchParams(StringSlice(st.rec.search, 1));
          WeakMapGet(paramsState, st.params).url = this;
        }
        return st.params;
      }
      toString() { return urlOf(this).rec.href; }
      toJSON() { return urlOf(this).rec.href; }
      get [Symbol.toStringTag]() { return 'URL'; }
    }
    return { URL: URL, URLSearchParams: URLSearchParams };
  });
  lazyGlobal('URL', function () { return getUrlClasses().URL; });
  lazyGlobal('URLSearchParams', function () { return getUrlClasses().URLSearchParams; });

  // ---------------------------------------------------------------- console (captured, capped)
  let logLines = 0;
  function formatValue(v, top) {
    switch (typeof v) {
      case 'string': return top ? v : JSONStringify(v);
      case 'number': case 'boolean': case 'undefined': return StringCtor(v);
      case 'bigint': return StringCtor(v) + 'n';
      case 'symbol': return v.toString();
      case 'function': return '[Function: ' + (v.name || '(anonymous)') + ']';
    }
    if (v === null) return 'null';
    if (v instanceof ErrorCtor) return typeof v.stack === 'string' ? v.stack : v.name + ': ' + v.message;
    if (BufferClass !== null && v instanceof BufferClass) {
      const shown = hexEncode(v, 0, MathMin(v.length, 50)).replace(/(..)(?!$)/g, '$1 ');
      return '<Buffer ' + shown + (v.length > 50 ? ' ... ' + (v.length - 50) + ' more bytes' : '') + '>';
    }
    const seen = [];
    const json = JSONStringify(v, function (key, value) {
      if (typeof value === 'bigint') return StringCtor(value) + 'n';
      if (typeof value === 'function') return '[Function: ' + (value.name || '(anonymous)') + ']';
      if (typeof value === 'undefined') return key === '' ? value : undefined;
      if (value !== null && typeof value === 'object') {
        if (value instanceof MapCtor) return { '[Map]': Array.from(value.entries()) };
        if (value instanceof Set) return { '[Set]': Array.from(value.values()) };
        if (seen.indexOf(value) !== -1) return '[Circular]';
        seen.push(value);
      }
      return value;
    });
    return json === undefined ? ObjectPrototypeToString(v) : json;
  }
  function formatArgs(args) {
    let i = 0;
    let out = '';
    if (typeof args[0] === 'string' && args[0].indexOf('%') !== -1 && args.length > 1) {
      i = 1;
      out = args[0].replace(/%[sdifjoOc%]/g, function (m) {
        if (m === '%%') return '%';
        if (i >= args.length) return m;
        const a = args[i++];
        switch (m) {
          case '%s': return typeof a === 'string' ? a : formatValue(a, true);
          case '%d': case '%i': return typeof a === 'bigint' ? a + 'n' : StringCtor(m === '%i' ? parseInt(a, 10) : +a);
          case '%f': return StringCtor(parseFloat(a));
          case '%c': return '';
          default: return formatValue(a, false);
        }
      });
    } else if (args.length > 0) {
      out = formatValue(args[0], true);
      i = 1;
    }
    for (; i < args.length; i++) out += ' ' + formatValue(args[i], true);
    return out;
  }
  function emit(level, args) {
    if (logLines >= limits.maxLogLines) return;
    logLines++;
    let line;
    try { line = formatArgs(args); } catch (e) { line = '[unprintable value: ' + describe(e) + ']'; }
    if (line.length > limits.maxLogLineLength) line = StringSlice(line, 0, limits.maxLogLineLength);
    host('log', level, line);
  }
  const consoleObject = {
    log: function log() { emit('log', arguments); },
    info: function info() { emit('info', arguments); },
    warn: function warn() { emit('warn', arguments); },
    error: function error() { emit('error', arguments); },
    debug: function debug() { emit('debug', arguments); },
    trace: function trace() { emit('debug', arguments); },
    dir: function dir(v) { emit('log', [v]); },
    assert: function assert(condition) {
      if (!condition) emit('error', ['Assertion failed' + (arguments.length > 1 ? ':' : '')].concat(Array.prototype.slice.call(arguments, 1)));
    },
  };
  define(G, 'console', consoleObject);

  // ---------------------------------------------------------------- pending host work (svc, timers)
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

  // ---------------------------------------------------------------- svc client
  const getSvcRequestError = lazy(function () {
    class SvcRequestError extends ErrorCtor {}
    define(SvcRequestError.prototype, 'name', 'SvcRequestError');
    return SvcRequestError;
  });
  const SVC_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

  function svcRequest(options) {
    return new PromiseCtor(function (resolve, reject) {
      if (options === null || typeof options !== 'object') throw new TypeErrorCtor('svc.request expects {method, path, body, query}');
      const method = StringCtor(options.method === undefined ? 'GET' : options.method).toUpperCase();
      const path = StringCtor(options.path);
      if (SVC_METHODS.indexOf(method) === -1) throw new TypeErrorCtor('svc.request: unsupported method ' + method);
      if (path[0] !== '/') throw new TypeErrorCtor('svc.request: path must start with "/"');
      const query = {};
      if (options.query !== undefined && options.query !== null) {
        for (const key of ObjectKeys(options.query)) {
          const v = options.query[key];
          if (v === undefined || v === null) continue;
          query[key] = ArrayIsArray(v) ? v.map(StringCtor) : StringCtor(v);
        }
      }
      const request = JSONStringify({ method: method, path: path, body: options.body, query: query });
      const id = nextPendingId++;
      MapSet(pending, id, function (payload) {
        const r = JSONParse(payload);
        if (r.error !== undefined) {
          const e = new (getSvcRequestError())(method + ' ' + path + ' failed: ' + r.error);
          define(e, 'status', typeof r.status === 'number' ? r.status : 502);
          define(e, 'body', null);
          reject(e);
        } else if (r.status >= 200 && r.status < 300) {
          resolve(r.body);
        } else {
          const detail = r.body !== null && typeof r.body === 'object' && typeof r.body.detail === 'string' ? ': ' + r.body.detail : '';
          const e = new (getSvcRequestError())(method + ' ' + path + ' responded ' + r.status + detail);
          define(e, 'status', r.status);
          define(e, 'body', r.body);
          reject(e);
        }
      });
      const started = host('svc', id, request);
      if (started[0] !== true) { MapDelete(pending, id); throw new ErrorCtor(started[1]); }
    });
  }
  function makeSvc() {
    const seg = function (id) { return '/' + encodeURIComponent(StringCtor(id)); };
    return {
      request: svcRequest,
      applications: {
        list: function (query) { return svcRequest({ method: 'GET', path: '/applications', query: query }); },
        get: function (id) { return svcRequest({ method: 'GET', path: '/applications' + seg(id) }); },
        create: function (body) { return svcRequest({ method: 'POST', path: '/applications', body: body }); },
        update: function (id, body) { return svcRequest({ method: 'PUT', path: '/applications' + seg(id), body: body }); },
        delete: function (id) { return svcRequest({ method: 'DELETE', path: '/applications' + seg(id) }); },
        regenerate: function (id) { return svcRequest({ method: 'POST', path: '/applications' + seg(id) + '/regenerate' }); },
      },
      proxies: {
        list: function (query) { return svcRequest({ method: 'GET', path: '/proxies', query: query }); },
        get: function (id) { return svcRequest({ method: 'GET', path: '/proxies' + seg(id) }); },
        create: function (body) { return svcRequest({ method: 'POST', path: '/proxies', body: body }); },
        update: function (id, body) { return svcRequest({ method: 'PUT', path: '/proxies' + seg(id), body: body }); },
        patch: function (id, body) { return svcRequest({ method: 'PATCH', path: '/proxies' + seg(id), body: body }); },
        delete: function (id) { return svcRequest({ method: 'DELETE', path: '/proxies' + seg(id) }); },
      },
      logs: {
        list: function (query) { return svcRequest({ method: 'GET', path: '/logs', query: query }); },
      },
    };
  }

  // ---------------------------------------------------------------- require('crypto')
  const HASHES = ['md5', 'sha1', 'sha256', 'sha384', 'sha512'];
  function hashAlgorithm(alg) {
    const a = StringCtor(alg).toLowerCase().replace(/^sha-/, 'sha');
    if (HASHES.indexOf(a) === -1) throw new ErrorCtor('Digest method not supported');
    return a;
  }
  function dataBytes(data, encoding) {
    if (typeof data === 'string') return encodeString(data, encoding);
    const b = asBytes(data);
    if (!b) throw new TypeErrorCtor('The "data" argument must be of type string or an instance of Buffer, TypedArray, or DataView.');
    return b;
  }
  function joinChunks(chunks) {
    let total = 0;
    for (const c of chunks) total += c.length;
    const out = new U8(total);
    let p = 0;
    for (const c of chunks) { out.set(c, p); p += c.length; }
    return out;
  }
  function finishDigest(raw, encoding) {
    const b = toBuffer(new U8(raw));
    return encoding === undefined || encoding === 'buffer' ? b : b.toString(encoding);
  }
  const digestState = new WeakMapCtor();
  function digestOf(self) {
    const st = WeakMapGet(digestState, self);
    if (!st) throw new TypeErrorCtor('Illegal invocation');
    if (st.done) throw new ErrorCtor('Digest already called');
    return st;
  }
  const getCrypto = lazy(function () {
    class Hash {
      constructor(alg) { WeakMapSet(digestState, this, { alg: hashAlgorithm(alg), key: null, chunks: [], size: 0, done: false }); }
      update(data, encoding) {
        const st = digestOf(this);
        const bytes = bytesForHost(dataBytes(data, encoding));
        st.size += bytes.length;
        if (st.size > limits.maxDigestInput) throw new RangeErrorCtor('Digest input exceeds ' + limits.maxDigestInput + ' bytes');
        st.chunks.push(bytes);
        return this;
      }
      digest(encoding) {
        const st = digestOf(this);
        st.done = true;
        const raw = st.key === null
          ? callHost('hash', st.alg, joinChunks(st.chunks))
          : callHost('hmac', st.alg, st.key, joinChunks(st.chunks));
        return finishDigest(raw, encoding);
      }
    }
    class Hmac extends Hash {
      constructor(alg, key) {
        super(alg);
        const k = typeof key === 'string' ? utf8Encode(key) : asBytes(key);
        if (!k) throw new TypeErrorCtor('The "key" argument must be of type string or an instance of Buffer, TypedArray, or DataView.');
        WeakMapGet(digestState, this).key = bytesForHost(k);
      }
    }
    function randomBytes(size, callback) {
      const n = checkSize(size);
      if (n > limits.maxRandomBytes) throw new RangeErrorCtor('randomBytes is limited to ' + limits.maxRandomBytes + ' bytes');
      const b = toBuffer(new U8(callHost('randomBytes', n)));
      if (typeof callback === 'function') { PromiseThen(PromiseCtor.resolve(), function () { callback(null, b); }); return undefined; }
      return b;
    }
    const cryptoModule = ObjectFreeze({
      createHash: function createHash(alg) { return new Hash(alg); },
      createHmac: function createHmac(alg, key) { return new Hmac(alg, key); },
      randomUUID: function randomUUID() { return callHost('randomUUID'); },
      randomBytes: randomBytes,
      getHashes: function getHashes() { return HASHES.slice(); },
      timingSafeEqual: function timingSafeEqual(a, b) {
        const x = asBytes(a), y = asBytes(b);
        if (!x || !y) throw new TypeErrorCtor('The arguments must be Buffer, TypedArray, or DataView instances.');
        if (x.byteLength !== y.byteLength) throw new RangeErrorCtor('Input buffers must have the same byte length');
        let diff = 0;
        for (let i = 0; i < x.byteLength; i++) diff |= x[i] ^ y[i];
        return diff === 0;
      },
    });

    return cryptoModule;
  });

  const MODULES = new MapCtor([['crypto', getCrypto], ['node:crypto', getCrypto]]);
  function requireModule(name) {
    const load = MapGet(MODULES, name);
    if (load === undefined) {
      const e = new ErrorCtor("Cannot find module '" + StringCtor(name) + "': transforms may only require 'crypto'");
      define(e, 'code', 'MODULE_NOT_FOUND');
      throw e;
    }
    return load();
  }

  // ---------------------------------------------------------------- the loader
  let inputJson = null;
  function setInput(json) { inputJson = json; }

  function isStatus(s) { return typeof s === 'number' && NumberIsInteger(s) && s >= 200 && s <= 599; }

  function plainHeaders(h) {
    const out = ObjectCreate(null);
    if (h === undefined || h === null) return out;
    if (typeof h !== 'object') throw runtimeError('headers must be an object of strings');
    for (const key of ObjectKeys(h)) {
      const v = h[key];
      if (typeof v === 'string') out[key] = v;
      else if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') out[key] = StringCtor(v);
    }
    return out;
  }

  function proxyErrorOutcome(title, status, detail, errors) {
    return { ok: false, status: status, headers: {}, body: { proxy_error: { title: title, status: status, detail: detail, errors: errors } } };
  }
  function runtimeErrorOutcome(detail) {
    return proxyErrorOutcome('ReactorRuntimeError', 500, detail, {});
  }

  function okOutcome(result) {
    if (result === null || typeof result !== 'object') {
      throw runtimeError('The transform must return an object such as {body, headers}');
    }
    const out = { ok: true, body: result.body, headers: plainHeaders(result.headers) };
    const status = result.status;
    if (status !== undefined) {
      if (!isStatus(status)) throw runtimeError('The transform returned an invalid status: ' + StringCtor(status));
      out.status = status;
    }
    return out;
  }

  function errorOutcome(e) {
    try {
      if (CustomHttpResponseClass !== null && e instanceof CustomHttpResponseClass) {
        if (!isStatus(e.status)) return runtimeErrorOutcome('CustomHttpResponseError status must be an integer from 200 to 599');
        return { ok: false, status: e.status, headers: plainHeaders(e.headers), body: e.body };
      }
      for (const C of proxyErrorClasses) {
        if (e instanceof C) {
          const info = MapGet(proxyErrorInfo, C);
          let errors = e.errors;
          if (errors === null || typeof errors !== 'object') errors = {};
          return proxyErrorOutcome(info.title, info.status, describe(e), errors);
        }
      }
      return runtimeErrorOutcome(describe(e));
    } catch (inner) {
      return runtimeErrorOutcome(describe(inner));
    }
  }

  // The module's exported function, kept after the first load of this context: the host runs later
  // invocations of the same tenant and code with 'invoke', which calls it again on new input without
  // re-evaluating the module (module-scope state is therefore shared by that tenant's own runs only).
  let keptHandler = null;
  // Whether the current run ended in a way that leaves this runtime in a known state: a returned
  // result, or an error the transform threw on purpose (CustomHttpResponseError, a proxy error).
  let runClean = false;

  // Per-run state, reset before every run: a previous run's svc answers and timers can no longer be
  // delivered (its Invocation has ended) and must not be waited for, counted or fired.
  function beginRun() {
    MapClear(pending);
    MapClear(timerCallbacks);
    logLines = 0;
    runClean = false;
    newFatal();
  }

  function requestFrom(json) {
    const input = JSONParse(json);
    const req = { args: input.args, configuration: input.configuration };
    if (input.hasSvc) req.svc = makeSvc();
    return req;
  }

  function isDeliberate(e) {
    if (CustomHttpResponseClass !== null && e instanceof CustomHttpResponseClass) return true;
    for (const C of proxyErrorClasses) if (e instanceof C) return true;
    return false;
  }

  async function callHandler(handler, req) {
    const returned = handler(req);
    // Not Promise.race: it looks "then" up on the transform's own (patchable) prototypes.
    const result = await new PromiseCtor(function (resolve, reject) {
      PromiseThen(fatal, undefined, reject);
      PromiseThen(PromiseResolve(returned), resolve, reject);
    });
    const outcome = okOutcome(result);
    runClean = true;
    return outcome;
  }

  function failedOutcome(e) {
    let deliberate = false;
    try { deliberate = isDeliberate(e); } catch (_) { deliberate = false; }
    const outcome = errorOutcome(e);
    runClean = deliberate;
    return outcome;
  }

  async function runTransform(factory) {
    try {
      const req = requestFrom(inputJson);
      inputJson = null;
      const module = { exports: {} };
      uncurry(factory)(module.exports, module, module.exports, requireModule);
      const handler = module.exports;
      if (typeof handler !== 'function') {
        throw runtimeError('The transform module must export a function: module.exports = async function (req) { ... }');
      }
      keptHandler = handler;
      return await callHandler(handler, req);
    } catch (e) {
      return failedOutcome(e);
    }
  }

  async function runKept(json) {
    try {
      return await callHandler(keptHandler, requestFrom(json));
    } catch (e) {
      return failedOutcome(e);
    }
  }

  // The host reads the first character: '1' when the context may run this tenant's code again,
  // '0' when it must be disposed (an error the runtime did not expect, a fatal callback, a result it
  // refused). The rest is the JSON outcome.
  function serializeOutcome(outcome) {
    const clean = runClean && !fatalFired;
    runClean = false;
    // The common huge result is one giant string: refuse it before serialising doubles it.
    if (typeof outcome.body === 'string' && outcome.body.length > limits.maxResultLength) {
      return '0' + JSONStringify(runtimeErrorOutcome('The transform result exceeds ' + limits.maxResultLength + ' characters'));
    }
    let json;
    try {
      json = JSONStringify(outcome);
    } catch (e) {
      return '0' + JSONStringify(runtimeErrorOutcome('The transform result is not JSON-serializable: ' + describe(e)));
    }
    if (typeof json !== 'string' || json.length > limits.maxResultLength) {
      return '0' + JSONStringify(runtimeErrorOutcome('The transform result exceeds ' + limits.maxResultLength + ' characters'));
    }
    return (clean ? '1' : '0') + json;
  }

  // One-shot: the wrapped tenant script calls it, it removes itself before any tenant code runs.
  define(G, '__gatehouse_load', function load(factory) {
    delete G.__gatehouse_load;
    if (typeof factory !== 'function' || inputJson === null || keptHandler !== null) {
      return '0' + JSONStringify(runtimeErrorOutcome('The transform was loaded twice'));
    }
    beginRun();
    return PromiseThen(runTransform(factory), serializeOutcome);
  });

  // A later invocation in a context whose first run ended cleanly: same tenant, same code.
  function invoke(json) {
    if (keptHandler === null || typeof json !== 'string') {
      return '0' + JSONStringify(runtimeErrorOutcome('The transform is not loaded'));
    }
    beginRun();
    return PromiseThen(runKept(json), serializeOutcome);
  }

  // The host's synchronous path (SandboxIsolate.runSync): 'start' begins a run as 'invoke' does and
  // keeps its outcome; the host calls it on its own thread under a short budget, and the call returns
  // only after the microtasks it queued have run, so a run that awaits nothing outside the sandbox has
  // settled by then and 'take' hands over its outcome. 'take' answers null while the run still awaits
  // svc answers or timers; 'wait' is then the promise of the outcome, awaited off the host's thread.
  let startedRun = null;
  let startedOutcome = null;
  function start(json) {
    startedOutcome = null;
    const run = invoke(json);
    if (typeof run === 'string') {
      startedRun = null;
      startedOutcome = run;
      return undefined;
    }
    startedRun = run;
    PromiseThen(run, function (outcome) {
      if (startedRun === run) startedOutcome = outcome;
    });
    return undefined;
  }
  function take() {
    const outcome = startedOutcome;
    if (outcome !== null) {
      startedOutcome = null;
      startedRun = null;
    }
    return outcome;
  }
  function wait() {
    const run = startedRun;
    startedRun = null;
    startedOutcome = null;
    return run === null ? '0' + JSONStringify(runtimeErrorOutcome('The transform was not started')) : run;
  }

  // Used at compile time: the Function constructor parses the body on its own, so code that closes
  // the CommonJS wrapper early ("}); ...; (function () {") is rejected instead of running outside it.
  function checkSource(code) {
    try {
      new FunctionCtor('module', 'exports', 'require', code);
      return null;
    } catch (e) {
      return (e && typeof e.name === 'string' ? e.name + ': ' : '') + describe(e);
    }
  }

  // The one function the host holds a Reference to, for this context.
  return function control(op, a, b) {
    if (op === 'deliver') return deliver(a, b);
    if (op === 'input') return setInput(a);
    if (op === 'check') return checkSource(a);
    if (op === 'invoke') return invoke(a);
    if (op === 'start') return start(a);
    if (op === 'take') return take();
    if (op === 'wait') return wait();
    // 'ping' (or anything else): nothing, but it runs as a task, i.e. after whatever the isolate is busy with.
    return undefined;
  };
})
`;
