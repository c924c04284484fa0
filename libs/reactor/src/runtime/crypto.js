// The sandbox runtime: require('crypto').
/* global ErrorCtor, MapCtor, MapGet, ObjectFreeze, PromiseCtor, PromiseThen, RangeErrorCtor, StringCtor,
   TypeErrorCtor, U8, WeakMapCtor, WeakMapGet, WeakMapSet, asBytes, bytesForHost, callHost, checkSize, define,
   encodeString, lazy, limits, normalizeEncoding, toBuffer, utf8Encode */
/* exported requireModule */
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
// Hex and base64 digests come from the host as text (encoding them here cost more than the hash).
function hostEncoding(encoding) {
  if (encoding === undefined || encoding === 'buffer') return undefined;
  const e = normalizeEncoding(encoding);
  return e === 'hex' || e === 'base64' ? e : undefined;
}
function finishDigest(raw, encoding) {
  if (typeof raw === 'string') return raw;
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
        ? callHost('hash', st.alg, joinChunks(st.chunks), hostEncoding(encoding))
        : callHost('hmac', st.alg, st.key, joinChunks(st.chunks), hostEncoding(encoding));
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
