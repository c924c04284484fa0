// The sandbox runtime: require('crypto').
/* global ErrorCtor, addExchangeCrypto, addNativeCrypto, getSubtle, ObjectFreeze, PromiseCtor, PromiseThen, RangeErrorCtor, StringCtor,
   TypeErrorCtor, U8, WeakMapCtor, WeakMapGet, WeakMapSet, asBytes, bytesForHost, callHost, checkSize, joinBytes,
   encodeString, lazy, lazyGlobal, limits, normalizeEncoding, toBuffer, utf8Encode */
/* exported getCrypto */
// Every digest OpenSSL offers Node (crypto.getHashes(), lowercase), checked here so createHash throws as Node's does.
const HASHES = limits.hashes;
function hashAlgorithm(alg) {
  let a = StringCtor(alg).toLowerCase();
  if (HASHES.indexOf(a) === -1) a = a.replace(/^sha-/, 'sha');
  if (HASHES.indexOf(a) === -1) throw new ErrorCtor('Digest method not supported');
  return a;
}
function dataBytes(data, encoding) {
  if (typeof data === 'string') return encodeString(data, encoding);
  const b = asBytes(data);
  if (!b) throw new TypeErrorCtor('The "data" argument must be of type string or an instance of Buffer, TypedArray, or DataView.');
  return b;
}
// UTF-8 text goes to the host as text (Node encodes it natively; encoding it here cost more than the
// hash): the chunks are joined as one string while they are all text, else as bytes.
function joinChunks(chunks) {
  let text = true;
  for (const c of chunks)
    if (typeof c !== 'string') {
      text = false;
      break;
    }
  if (text) return chunks.join('');
  const bytes = [];
  for (const c of chunks) bytes.push(typeof c === 'string' ? utf8Encode(c) : c);
  return joinBytes(bytes);
}
function utf8Length(s) {
  let size = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) size += 1;
    else if (c < 0x800) size += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      size += 4;
      i++;
    } else size += 3;
  }
  return size;
}
function chunkLength(c) {
  return typeof c === 'string' ? utf8Length(c) : c.length;
}
function isUtf8(encoding) {
  return encoding === undefined || encoding === 'utf8' || encoding === 'utf-8' || normalizeEncoding(encoding) === 'utf8';
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
    constructor(alg) {
      WeakMapSet(digestState, this, { alg: hashAlgorithm(alg), key: null, chunks: [], size: 0, done: false });
    }
    update(data, encoding) {
      const st = digestOf(this);
      // Text counts as 3 bytes a character (at most what UTF-8 takes) until that bound passes the limit.
      const chunk = typeof data === 'string' && isUtf8(encoding) ? data : bytesForHost(dataBytes(data, encoding));
      st.size += typeof chunk === 'string' ? chunk.length * 3 : chunk.length;
      if (st.size > limits.maxDigestInput) {
        st.size = chunkLength(chunk);
        for (const c of st.chunks) st.size += chunkLength(c);
        if (st.size > limits.maxDigestInput) throw new RangeErrorCtor('Digest input exceeds ' + limits.maxDigestInput + ' bytes');
      }
      st.chunks.push(chunk);
      return this;
    }
    digest(encoding) {
      const st = digestOf(this);
      st.done = true;
      const raw =
        st.key === null
          ? callHost('hash', st.alg, joinChunks(st.chunks), hostEncoding(encoding))
          : callHost('hmac', st.alg, st.key, joinChunks(st.chunks), hostEncoding(encoding));
      return finishDigest(raw, encoding);
    }
  }
  class Hmac extends Hash {
    constructor(alg, key) {
      super(alg);
      const k = typeof key === 'string' ? key : asBytes(key);
      if (k === null) throw new TypeErrorCtor('The "key" argument must be of type string or an instance of Buffer, TypedArray, or DataView.');
      WeakMapGet(digestState, this).key = typeof k === 'string' ? k : bytesForHost(k);
    }
  }
  function randomBytes(size, callback) {
    const n = checkSize(size);
    if (n > limits.maxRandomBytes) throw new RangeErrorCtor('randomBytes is limited to ' + limits.maxRandomBytes + ' bytes');
    const b = toBuffer(new U8(callHost('randomBytes', n)));
    if (typeof callback === 'function') {
      PromiseThen(PromiseCtor.resolve(), function () {
        callback(null, b);
      });
      return undefined;
    }
    return b;
  }
  // Web Crypto (globalThis.crypto and require('crypto').webcrypto): random values here, subtle in crypto-subtle.js.
  const webcrypto = {
    getRandomValues: function getRandomValues(array) {
      if (!ArrayBuffer.isView(array) || array instanceof Float32Array || array instanceof Float64Array || array instanceof DataView) {
        throw new TypeErrorCtor('The data argument must be an integer-type TypedArray');
      }
      if (array.byteLength > 65536)
        throw new RangeErrorCtor(
          "The ArrayBufferView's byte length (" + array.byteLength + ') exceeds the number of bytes of entropy available via this API (65536)',
        );
      new U8(array.buffer, array.byteOffset, array.byteLength).set(new U8(callHost('randomBytes', array.byteLength)));
      return array;
    },
    randomUUID: function randomUUID() {
      return callHost('randomUUID');
    },
  };
  Object.defineProperty(webcrypto, 'subtle', { enumerable: true, get: getSubtle });
  const cryptoModule = ObjectFreeze(
    addExchangeCrypto(
      addNativeCrypto({
        webcrypto: webcrypto,
        subtle: webcrypto.subtle,
        getRandomValues: webcrypto.getRandomValues,
        createHash: function createHash(alg) {
          return new Hash(alg);
        },
        createHmac: function createHmac(alg, key) {
          return new Hmac(alg, key);
        },
        randomUUID: function randomUUID() {
          return callHost('randomUUID');
        },
        randomBytes: randomBytes,
        getHashes: function getHashes() {
          return HASHES.slice();
        },
        timingSafeEqual: function timingSafeEqual(a, b) {
          const x = asBytes(a),
            y = asBytes(b);
          if (!x || !y) throw new TypeErrorCtor('The arguments must be Buffer, TypedArray, or DataView instances.');
          if (x.byteLength !== y.byteLength) throw new RangeErrorCtor('Input buffers must have the same byte length');
          let diff = 0;
          for (let i = 0; i < x.byteLength; i++) diff |= x[i] ^ y[i];
          return diff === 0;
        },
      }),
    ),
  );

  return cryptoModule;
});
lazyGlobal('crypto', function () {
  return getCrypto().webcrypto;
});
