// The sandbox runtime: require('zlib'), run natively by the sandbox process with its output bounded.
/* global ErrorCtor, JSONParse, ObjectKeys, PromiseCtor, PromiseThen, TypeErrorCtor, U8, asBytes, bytesForHost, callHost,
   encodeString, joinBytes, lazy, raiseFatal, requireModule, toBuffer */
/* exported getZlib */
const ZLIB_METHODS = ['deflate', 'inflate', 'deflateRaw', 'inflateRaw', 'gzip', 'gunzip', 'unzip', 'brotliCompress', 'brotliDecompress'];
const ZLIB_STREAMS = {
  deflate: 'Deflate',
  inflate: 'Inflate',
  deflateRaw: 'DeflateRaw',
  inflateRaw: 'InflateRaw',
  gzip: 'Gzip',
  gunzip: 'Gunzip',
  unzip: 'Unzip',
  brotliCompress: 'BrotliCompress',
  brotliDecompress: 'BrotliDecompress',
};

function zlibInput(data) {
  if (typeof data === 'string') return bytesForHost(encodeString(data, 'utf8'));
  const bytes = asBytes(data);
  if (!bytes) throw new TypeErrorCtor('The "buffer" argument must be of type string or an instance of Buffer, TypedArray, DataView, or ArrayBuffer.');
  return bytesForHost(bytes);
}
// Only numbers and a dictionary cross: the host ignores anything else (and bounds the output whatever they ask).
function zlibOptions(options) {
  if (options === undefined || options === null || typeof options !== 'object') return undefined;
  const out = {};
  for (const key of ['level', 'windowBits', 'memLevel', 'strategy', 'chunkSize', 'finishFlush', 'flush']) {
    if (typeof options[key] === 'number') out[key] = options[key];
  }
  if (options.dictionary !== undefined) out.dictionary = zlibInput(options.dictionary);
  if (options.params !== null && typeof options.params === 'object') {
    out.params = {};
    for (const key of ObjectKeys(options.params)) if (typeof options.params[key] === 'number') out.params[key] = options.params[key];
  }
  return out;
}
function zlibRun(method, data, options) {
  const raw = callHost('zlib', method, zlibInput(data), zlibOptions(options));
  return toBuffer(new U8(raw));
}

const getZlib = lazy(function () {
  const zlib = {};
  for (const method of ZLIB_METHODS) {
    zlib[method + 'Sync'] = function (data, options) {
      return zlibRun(method, data, options);
    };
    zlib[method] = function (data, options, callback) {
      if (typeof options === 'function') {
        callback = options;
        options = undefined;
      }
      if (typeof callback !== 'function') throw new TypeErrorCtor('The "callback" argument must be of type function');
      let result = null,
        error = null;
      try {
        result = zlibRun(method, data, options);
      } catch (e) {
        error = e;
      }
      PromiseThen(PromiseCtor.resolve(), function () {
        try {
          callback(error, error === null ? result : undefined);
        } catch (e) {
          raiseFatal(e);
        }
      });
    };
    // Streams: the whole input is taken, then transformed at its end (bounded like the one-shot calls).
    const className = ZLIB_STREAMS[method];
    zlib[className] = function (options) {
      return zlibStream(method, options);
    };
    zlib['create' + className] = function (options) {
      return zlibStream(method, options);
    };
  }
  zlib.constants = JSONParse(callHost('zlibConstants'));
  for (const key of ObjectKeys(zlib.constants)) zlib[key] = zlib.constants[key];
  zlib.crc32 = function crc32(data, value) {
    return callHost('crc32', zlibInput(data), value === undefined ? 0 : value >>> 0);
  };
  return zlib;
});

function zlibStream(method, options) {
  const Transform = requireModule('stream').Transform;
  const chunks = [];
  return new Transform({
    transform: function (chunk, encoding, done) {
      chunks.push(typeof chunk === 'string' ? encodeString(chunk, encoding) : chunk);
      done();
    },
    flush: function (done) {
      const all = joinBytes(chunks);
      try {
        done(null, zlibRun(method, all, options));
      } catch (e) {
        done(e instanceof ErrorCtor ? e : new ErrorCtor(String(e)));
      }
    },
  });
}
