// The sandbox runtime: crypto.subtle (Web Crypto), run by the sandbox process (sandbox-subtle.ts); answers arrive as
// svc answers do. A CryptoKey is kept here as bytes with its algorithm, usages and extractability.
/* global ArrayIsArray, ErrorCtor, JSONParse, JSONStringify, MapDelete, MapSet, ObjectKeys, PromiseCtor, TypeErrorCtor,
   WeakMapCtor, WeakMapGet, WeakMapSet, asBytes, base64Decode, base64Encode, callHost, define, lazy, lazyGlobal,
   nextPendingId:writable, pending */
/* exported getSubtle */
const cryptoKeyState = new WeakMapCtor();
const getCryptoKeyClass = lazy(function () {
  class CryptoKey {
    constructor() {
      throw new TypeErrorCtor('Illegal constructor');
    }
    get type() {
      return keyState(this).type;
    }
    get extractable() {
      return keyState(this).extractable;
    }
    get algorithm() {
      return keyState(this).algorithm;
    }
    get usages() {
      return keyState(this).usages.slice();
    }
  }
  define(CryptoKey.prototype, Symbol.toStringTag, 'CryptoKey');
  return CryptoKey;
});
lazyGlobal('CryptoKey', getCryptoKeyClass);
function keyState(key) {
  const st = WeakMapGet(cryptoKeyState, key);
  if (!st) throw new TypeErrorCtor('Illegal invocation');
  return st;
}
function packValue(v) {
  const st = v !== null && typeof v === 'object' ? WeakMapGet(cryptoKeyState, v) : undefined;
  if (st) return { $key: st.record };
  const bytes = v !== null && typeof v === 'object' ? asBytes(v) : null;
  if (bytes) return { $b: base64Encode(bytes, 0, bytes.length, false) };
  if (ArrayIsArray(v)) return v.map(packValue);
  if (v !== null && typeof v === 'object') {
    const out = {};
    for (const k of ObjectKeys(v)) out[k] = packValue(v[k]);
    return out;
  }
  return v;
}
function unpackValue(v) {
  if (ArrayIsArray(v)) return v.map(unpackValue);
  if (v !== null && typeof v === 'object') {
    if (typeof v.$b === 'string') return base64Decode(v.$b);
    const out = {};
    for (const k of ObjectKeys(v)) out[k] = unpackValue(v[k]);
    return out;
  }
  return v;
}
function makeCryptoKey(record) {
  const key = Object.create(getCryptoKeyClass().prototype);
  WeakMapSet(cryptoKeyState, key, {
    record: { kind: record.kind, der: record.der, algorithm: record.algorithm, usages: record.usages },
    type: record.type,
    extractable: record.extractable,
    algorithm: unpackValue(record.algorithm),
    usages: record.usages,
  });
  return key;
}
function domError(name, message) {
  const e = new ErrorCtor(message);
  define(e, 'name', name);
  return e;
}
function subtleRun(method, args, shape) {
  return new PromiseCtor(function (resolve, reject) {
    const id = nextPendingId++;
    MapSet(pending, id, function (payload) {
      const r = JSONParse(payload);
      if (r.error !== undefined) {
        reject(r.name === 'TypeError' ? new TypeErrorCtor(r.error) : domError(r.name, r.error));
        return;
      }
      resolve(shape(r.ok));
    });
    try {
      callHost('subtle', id, method, JSONStringify(packValue(args)));
    } catch (e) {
      MapDelete(pending, id);
      reject(e);
    }
  });
}
function asArrayBuffer(v) {
  const b = unpackValue(v);
  return b.buffer.byteLength === b.length ? b.buffer : b.slice().buffer;
}
function asKey(v) {
  return v.pair ? { publicKey: makeCryptoKey(v.publicKey), privateKey: makeCryptoKey(v.privateKey) } : makeCryptoKey(v);
}
function same(v) {
  return v;
}
function exportable(key) {
  const st = WeakMapGet(cryptoKeyState, key);
  if (!st) throw new TypeErrorCtor('The "key" argument must be an instance of CryptoKey.');
  if (!st.extractable) throw domError('InvalidAccessError', 'key is not extractable');
}
const getSubtle = lazy(function () {
  const subtle = {
    digest: function digest(alg, data) {
      return subtleRun('digest', [alg, data], asArrayBuffer);
    },
    importKey: function importKey(format, keyData, alg, extractable, usages) {
      return subtleRun('importKey', [format, keyData, alg, extractable === true, usages], asKey);
    },
    exportKey: function exportKey(format, key) {
      try {
        exportable(key);
      } catch (e) {
        return PromiseCtor.reject(e);
      }
      return subtleRun('exportKey', [format, key], function (v) {
        return format === 'jwk' ? unpackValue(v) : asArrayBuffer(v);
      });
    },
    generateKey: function generateKey(alg, extractable, usages) {
      return subtleRun('generateKey', [alg, extractable === true, usages], asKey);
    },
    sign: function sign(alg, key, data) {
      return subtleRun('sign', [alg, key, data], asArrayBuffer);
    },
    verify: function verify(alg, key, signature, data) {
      return subtleRun('verify', [alg, key, signature, data], same);
    },
    encrypt: function encrypt(alg, key, data) {
      return subtleRun('encrypt', [alg, key, data], asArrayBuffer);
    },
    decrypt: function decrypt(alg, key, data) {
      return subtleRun('decrypt', [alg, key, data], asArrayBuffer);
    },
    deriveBits: function deriveBits(alg, baseKey, length) {
      return subtleRun('deriveBits', [alg, baseKey, length === undefined ? null : length], asArrayBuffer);
    },
    deriveKey: function deriveKey(alg, baseKey, derivedAlg, extractable, usages) {
      return subtleRun('deriveKey', [alg, baseKey, derivedAlg, extractable === true, usages], asKey);
    },
    wrapKey: function wrapKey(format, key, wrappingKey, wrapAlg) {
      try {
        exportable(key);
      } catch (e) {
        return PromiseCtor.reject(e);
      }
      return subtleRun('wrapKey', [format, key, wrappingKey, wrapAlg], asArrayBuffer);
    },
    unwrapKey: function unwrapKey(format, wrapped, unwrappingKey, unwrapAlg, keyAlg, extractable, usages) {
      return subtleRun('unwrapKey', [format, wrapped, unwrappingKey, unwrapAlg, keyAlg, extractable === true, usages], asKey);
    },
  };
  define(subtle, Symbol.toStringTag, 'SubtleCrypto');
  return subtle;
});
