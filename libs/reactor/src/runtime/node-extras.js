// The sandbox runtime: what the polyfills of util and querystring lack of Node's own behaviour (util.format's
// specifiers, isDeepStrictEqual, TextEncoder; querystring's lenient unescape), added when they are first required.
/* global ArrayIsArray, ErrorCtor, G, JSONStringify, MapCtor, MapGet, MapSet, ObjectKeys, StringCtor, TypeErrorCtor */
/* global define, U8, getBuffer, getTextDecoder, getTextEncoder, requireModule, utf8Decode */
/* exported extendQuerystring, extendUtil */
function extendUtil(util) {
  const inspect = util.inspect;
  function formatNumber(n) {
    return n === 0 && 1 / n < 0 ? '-0' : StringCtor(n);
  }
  function asString(a) {
    if (typeof a === 'string') return a;
    if (typeof a === 'bigint') return a + 'n';
    if (typeof a === 'number') return formatNumber(a);
    if (typeof a === 'symbol') return a.toString();
    if (
      a !== null &&
      typeof a === 'object' &&
      (typeof a.toString !== 'function' || a.toString === Object.prototype.toString || a.toString === Array.prototype.toString)
    ) {
      return inspect(a, { depth: 0, colors: false, compact: 3 });
    }
    return StringCtor(a);
  }
  function json(a) {
    try {
      return JSONStringify(a);
    } catch (e) {
      if (e instanceof TypeError && /circular/i.test(e.message)) return '[Circular]';
      throw e;
    }
  }
  function format(first) {
    const args = arguments;
    let i = 1;
    let out = '';
    if (typeof first === 'string') {
      if (args.length === 1) return first;
      out = first.replace(/%[sdifjoOc%]/g, function (m) {
        if (m === '%%') return '%';
        if (i >= args.length) return m;
        const a = args[i++];
        switch (m) {
          case '%s':
            return asString(a);
          case '%d':
            return typeof a === 'bigint' ? a + 'n' : typeof a === 'symbol' ? 'NaN' : formatNumber(Number(a));
          case '%i':
            return typeof a === 'bigint' ? a + 'n' : typeof a === 'symbol' ? 'NaN' : formatNumber(parseInt(a, 10));
          case '%f':
            return typeof a === 'symbol' ? 'NaN' : formatNumber(parseFloat(a));
          case '%j':
            return json(a);
          case '%o':
            return inspect(a, { showHidden: true, showProxy: true, depth: 4 });
          case '%O':
            return inspect(a);
          default:
            return '';
        }
      });
    } else {
      i = 0;
    }
    for (; i < args.length; i++) {
      const a = args[i];
      out += (out === '' && i === 0 ? '' : ' ') + (typeof a === 'string' ? a : inspect(a));
    }
    return out;
  }
  util.format = format;
  util.formatWithOptions = function formatWithOptions(options) {
    return format.apply(undefined, Array.prototype.slice.call(arguments, 1));
  };
  util.isDeepStrictEqual = function isDeepStrictEqual(a, b) {
    try {
      requireModule('assert').deepStrictEqual(a, b);
      return true;
    } catch (_) {
      return false;
    }
  };
  // Node's promisify.custom is the registered symbol (util@0.12's is a private one): functions of other packages that
  // carry it (readable-stream's finished and pipeline), and the timers, promisify as in Node.
  const custom = Symbol.for('nodejs.util.promisify.custom');
  const basePromisify = util.promisify;
  util.promisify = function promisify(original) {
    if (typeof original === 'function' && original[custom] !== undefined) {
      const fn = original[custom];
      if (typeof fn !== 'function') throw new TypeErrorCtor('The "util.promisify.custom" argument must be of type function');
      return fn;
    }
    return basePromisify(original);
  };
  util.promisify.custom = custom;
  const timers = requireModule('timers/promises');
  if (G.setTimeout[custom] === undefined) define(G.setTimeout, custom, timers.setTimeout);
  if (G.setImmediate[custom] === undefined) define(G.setImmediate, custom, timers.setImmediate);
  util.TextEncoder = getTextEncoder();
  util.TextDecoder = getTextDecoder();
  return util;
}

function extendQuerystring(qs) {
  const strict = qs.unescape;
  // Node's unescape keeps what does not decode (a lone '%', an invalid sequence) instead of throwing.
  qs.unescape = function unescape(s, decodeSpaces) {
    try {
      return strict(s, decodeSpaces);
    } catch (_) {
      return lenientDecode(StringCtor(s), decodeSpaces);
    }
  };
  qs.unescapeBuffer = function unescapeBuffer(s, decodeSpaces) {
    return getBuffer().from(lenientBytes(StringCtor(s), decodeSpaces));
  };
  return qs;
}
function lenientBytes(s, decodeSpaces) {
  const bytes = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const hex = s.slice(i + 1, i + 3);
    if (c === 37 && /^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
      continue;
    }
    if (c === 43 && decodeSpaces) {
      bytes.push(32);
      continue;
    }
    const encoded = getBuffer().from(s[i]);
    for (let j = 0; j < encoded.length; j++) bytes.push(encoded[j]);
  }
  return new U8(bytes);
}
function lenientDecode(s, decodeSpaces) {
  const b = lenientBytes(s, decodeSpaces);
  return utf8Decode(b, 0, b.length);
}

// structuredClone: plain data, Dates, RegExps, Maps, Sets, ArrayBuffers and their views, with cycles; anything else throws
// the DataCloneError Node's does.
function structuredCloneImpl(value) {
  const seen = new MapCtor();
  function clone(v) {
    if (v === null || typeof v !== 'object') {
      if (typeof v === 'function' || typeof v === 'symbol') throw cloneError(v);
      return v;
    }
    if (MapGet(seen, v) !== undefined) return MapGet(seen, v);
    let out;
    if (ArrayIsArray(v)) {
      out = [];
      MapSet(seen, v, out);
      for (let i = 0; i < v.length; i++) out[i] = clone(v[i]);
      return out;
    }
    if (v instanceof Date) return new Date(v.getTime());
    if (v instanceof RegExp) return new RegExp(v.source, v.flags);
    if (v instanceof ArrayBuffer) {
      out = v.slice(0);
      MapSet(seen, v, out);
      return out;
    }
    if (ArrayBuffer.isView(v)) return new v.constructor(clone(v.buffer), v.byteOffset, v instanceof DataView ? v.byteLength : v.length);
    if (v instanceof MapCtor) {
      out = new MapCtor();
      MapSet(seen, v, out);
      v.forEach(function (x, k) {
        out.set(clone(k), clone(x));
      });
      return out;
    }
    if (v instanceof Set) {
      out = new Set();
      MapSet(seen, v, out);
      v.forEach(function (x) {
        out.add(clone(x));
      });
      return out;
    }
    if (v instanceof ErrorCtor) {
      out = new ErrorCtor(v.message);
      define(out, 'name', v.name);
      return out;
    }
    out = {};
    MapSet(seen, v, out);
    for (const k of ObjectKeys(v)) out[k] = clone(v[k]);
    return out;
  }
  return clone(value);
}
function cloneError(v) {
  const e = new ErrorCtor((typeof v === 'function' ? v.toString() : StringCtor(v)) + ' could not be cloned.');
  define(e, 'name', 'DataCloneError');
  return e;
}
define(G, 'structuredClone', function structuredClone(value) {
  return structuredCloneImpl(value);
});
