// The sandbox runtime: the rest of require('crypto') (ciphers, keys, signatures, key derivation), done natively by the
// sandbox process (sandbox-crypto.ts) on bytes copied out of the isolate.
/* global ErrorCtor, JSONParse, PromiseCtor, PromiseThen, RangeErrorCtor, TypeErrorCtor, U8, WeakMapCtor,
   WeakMapGet, WeakMapSet, asBytes, bytesForHost, callHost, define, encodeString, joinBytes, lazy, raiseFatal, toBuffer */
/* exported addNativeCrypto, cryptoBytes, keyObjectState, keySpec, makeKeyObject, out */
const keyObjectState = new WeakMapCtor();
const getCryptoLists = lazy(function () {
  return JSONParse(callHost('c.cryptoLists'));
});

function cryptoBytes(value, encoding, what) {
  if (typeof value === 'string') return bytesForHost(encodeString(value, encoding));
  const b = asBytes(value);
  if (!b) throw new TypeErrorCtor('The "' + (what || 'data') + '" argument must be of type string or an instance of Buffer, TypedArray, or DataView.');
  return bytesForHost(b);
}
function out(raw, encoding) {
  const b = toBuffer(new U8(raw));
  return encoding === undefined || encoding === 'buffer' ? b : b.toString(encoding);
}
// After a result, in a later microtask: the Node callback style of the functions below.
function later(callback, error, value) {
  PromiseThen(PromiseCtor.resolve(), function () {
    try {
      callback(error, value);
    } catch (e) {
      raiseFatal(e);
    }
  });
}
function withCallback(fn, args, callback) {
  let value,
    error = null;
  try {
    value = fn.apply(undefined, args);
  } catch (e) {
    error = e;
  }
  later(callback, error, error === null ? value : undefined);
}

const getKeyObject = lazy(function () {
  class KeyObject {
    constructor() {
      throw new TypeErrorCtor('Illegal constructor');
    }
    get type() {
      return stateOf(this).kind;
    }
    get asymmetricKeyType() {
      return stateOf(this).asymmetricKeyType;
    }
    get asymmetricKeyDetails() {
      return stateOf(this).asymmetricKeyDetails;
    }
    get symmetricKeySize() {
      return stateOf(this).symmetricKeySize;
    }
    export(options) {
      const st = stateOf(this);
      const o = options === undefined || options === null ? {} : options;
      const r = callHost(
        'c.keyExport',
        { kind: st.kind, der: st.der },
        {
          format: o.format,
          type: o.type,
          cipher: o.cipher,
          passphrase: o.passphrase === undefined ? undefined : cryptoBytes(o.passphrase, 'utf8', 'passphrase'),
        },
      );
      return r instanceof ArrayBuffer ? toBuffer(new U8(r)) : r;
    }
    equals(other) {
      const a = stateOf(this),
        b = WeakMapGet(keyObjectState, other);
      if (!b || a.kind !== b.kind || a.der.length !== b.der.length) return false;
      for (let i = 0; i < a.der.length; i++) if (a.der[i] !== b.der[i]) return false;
      return true;
    }
  }
  define(KeyObject.prototype, Symbol.toStringTag, 'KeyObject');
  return KeyObject;
});
function stateOf(key) {
  const st = WeakMapGet(keyObjectState, key);
  if (!st) throw new TypeErrorCtor('Illegal invocation');
  return st;
}
function makeKeyObject(record) {
  const key = Object.create(getKeyObject().prototype);
  WeakMapSet(keyObjectState, key, {
    kind: record.kind,
    der: new U8(record.der),
    asymmetricKeyType: record.asymmetricKeyType,
    asymmetricKeyDetails: record.asymmetricKeyDetails,
    symmetricKeySize: record.symmetricKeySize,
  });
  return key;
}
// A key argument as the host takes it (see KeySpec in sandbox-crypto.ts).
function keySpec(key) {
  const st = WeakMapGet(keyObjectState, key);
  if (st) return { kind: st.kind, der: st.der };
  if (typeof key === 'string' || asBytes(key)) return { key: typeof key === 'string' ? key : cryptoBytes(key) };
  if (key === null || typeof key !== 'object')
    throw new TypeErrorCtor('The "key" argument must be of type string or an instance of Buffer, KeyObject or an object');
  const inner = WeakMapGet(keyObjectState, key.key);
  const spec = inner
    ? { kind: inner.kind, der: inner.der }
    : {
        key: key.format === 'jwk' ? key.key : typeof key.key === 'string' ? key.key : cryptoBytes(key.key, key.encoding, 'key'),
        format: key.format,
        type: key.type,
        encoding: key.encoding,
        passphrase: key.passphrase === undefined ? undefined : cryptoBytes(key.passphrase, 'utf8', 'passphrase'),
      };
  for (const name of ['padding', 'saltLength', 'dsaEncoding', 'oaepHash']) if (key[name] !== undefined) spec[name] = key[name];
  if (key.oaepLabel !== undefined) spec.oaepLabel = cryptoBytes(key.oaepLabel);
  return spec;
}
function createKey(kind, key, encoding) {
  if (kind === 'secret') return makeKeyObject(callHost('c.keyCreate', 'secret', { key: cryptoBytes(key, encoding, 'key') }));
  return makeKeyObject(callHost('c.keyCreate', kind, keySpec(key)));
}

// Ciphers: the host keeps each one open (one handle a cipher); every update is one call.
const cipherState = new WeakMapCtor();
function cipherOf(self) {
  const st = WeakMapGet(cipherState, self);
  if (!st) throw new TypeErrorCtor('Illegal invocation');
  return st;
}
const getCipherClass = lazy(function () {
  class Cipheriv {
    update(data, inputEncoding, outputEncoding) {
      return out(callHost('c.cipherUpdate', cipherOf(this).id, cryptoBytes(data, inputEncoding)), outputEncoding);
    }
    final(outputEncoding) {
      const st = cipherOf(this);
      const r = callHost('c.cipherFinal', st.id);
      st.tag = r[1];
      return out(r[0], outputEncoding);
    }
    setAAD(data, options) {
      callHost('c.cipherAAD', cipherOf(this).id, cryptoBytes(data), options && options.plaintextLength);
      return this;
    }
    setAuthTag(tag, encoding) {
      callHost('c.cipherSetTag', cipherOf(this).id, cryptoBytes(tag, encoding));
      return this;
    }
    getAuthTag() {
      const tag = cipherOf(this).tag;
      if (tag === null || tag === undefined) throw new ErrorCtor('Invalid state for operation getAuthTag');
      return toBuffer(new U8(tag));
    }
    setAutoPadding(on) {
      callHost('c.cipherPadding', cipherOf(this).id, on !== false);
      return this;
    }
  }
  return Cipheriv;
});
function openCipher(decipher, algorithm, key, iv, options) {
  const k = WeakMapGet(keyObjectState, key) ? keySpec(key) : cryptoBytes(key, undefined, 'key');
  const o = { decipher: decipher };
  if (options && typeof options.authTagLength === 'number') o.authTagLength = options.authTagLength;
  const id = callHost('c.cipherNew', String(algorithm), k, iv === null || iv === undefined ? null : cryptoBytes(iv, undefined, 'iv'), o);
  const c = Object.create(getCipherClass().prototype);
  WeakMapSet(cipherState, c, { id: id });
  return c;
}

// Sign and Verify: the data is gathered here, signed or verified in one call.
function gatherer(verify, algorithm) {
  const chunks = [];
  const self = {
    update: function (data, encoding) {
      chunks.push(cryptoBytes(data, encoding));
      return self;
    },
    end: function () {
      return self;
    },
  };
  const all = function () {
    return joinBytes(chunks);
  };
  if (verify)
    self.verify = function (key, signature, encoding) {
      return callHost('c.verify', algorithm, all(), keySpec(key), cryptoBytes(signature, encoding, 'signature'));
    };
  else
    self.sign = function (key, encoding) {
      return out(callHost('c.sign', algorithm, all(), keySpec(key)), encoding);
    };
  return self;
}

function randomInt(min, max, callback) {
  if (typeof max === 'function' || max === undefined) {
    callback = max;
    max = min;
    min = 0;
  }
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || max <= min || max - min > 0xffffffffffff) {
    throw new RangeErrorCtor('The value of "max" is out of range. It must be greater than the value of "min" (' + min + ') and less than 2^48.');
  }
  const range = max - min;
  const limit = 0x1000000000000 - (0x1000000000000 % range);
  let n;
  do {
    const b = new U8(callHost('randomBytes', 6));
    n = (b[0] * 0x10000 + b[1] * 0x100 + b[2]) * 0x1000000 + (b[3] * 0x10000 + b[4] * 0x100 + b[5]);
  } while (n >= limit);
  const value = min + (n % range);
  if (typeof callback === 'function') {
    later(callback, null, value);
    return undefined;
  }
  return value;
}

function generateKeyPairSync(type, options) {
  const o = options === undefined ? {} : options;
  const pair = callHost('c.keyGen', String(type), {
    modulusLength: o.modulusLength,
    publicExponent: o.publicExponent,
    namedCurve: o.namedCurve,
    hashAlgorithm: o.hashAlgorithm,
    mgf1HashAlgorithm: o.mgf1HashAlgorithm,
    saltLength: o.saltLength,
    divisorLength: o.divisorLength,
  });
  const publicKey = makeKeyObject(pair.publicKey),
    privateKey = makeKeyObject(pair.privateKey);
  return {
    publicKey: o.publicKeyEncoding ? publicKey.export(o.publicKeyEncoding) : publicKey,
    privateKey: o.privateKeyEncoding ? privateKey.export(o.privateKeyEncoding) : privateKey,
  };
}

function pbkdf2Sync(password, salt, iterations, keylen, digest) {
  return toBuffer(new U8(callHost('c.pbkdf2', [cryptoBytes(password, 'utf8', 'password'), cryptoBytes(salt, 'utf8', 'salt'), iterations, keylen, digest])));
}
function scryptSync(password, salt, keylen, options) {
  const o = {};
  if (options) for (const k of ['N', 'r', 'p', 'cost', 'blockSize', 'parallelization']) if (typeof options[k] === 'number') o[k] = options[k];
  return toBuffer(new U8(callHost('c.scrypt', cryptoBytes(password, 'utf8', 'password'), cryptoBytes(salt, 'utf8', 'salt'), keylen, o)));
}
function hkdfSync(digest, ikm, salt, info, keylen) {
  const key = WeakMapGet(keyObjectState, ikm) ? WeakMapGet(keyObjectState, ikm).der : cryptoBytes(ikm, 'utf8', 'ikm');
  return callHost('c.hkdf', [String(digest), key, cryptoBytes(salt, 'utf8', 'salt'), cryptoBytes(info, 'utf8', 'info'), keylen]);
}

function addNativeCrypto(m) {
  const rsa = function (method) {
    return function (key, buffer) {
      return toBuffer(new U8(callHost('c.rsa', method, keySpec(key), cryptoBytes(buffer, undefined, 'buffer'))));
    };
  };
  m.KeyObject = getKeyObject();
  m.createSecretKey = function createSecretKey(key, encoding) {
    return createKey('secret', key, encoding);
  };
  m.createPublicKey = function createPublicKey(key) {
    return createKey('public', key);
  };
  m.createPrivateKey = function createPrivateKey(key) {
    return createKey('private', key);
  };
  m.createCipheriv = function createCipheriv(algorithm, key, iv, options) {
    return openCipher(false, algorithm, key, iv, options);
  };
  m.createDecipheriv = function createDecipheriv(algorithm, key, iv, options) {
    return openCipher(true, algorithm, key, iv, options);
  };
  m.createSign = function createSign(algorithm) {
    return gatherer(false, String(algorithm));
  };
  m.createVerify = function createVerify(algorithm) {
    return gatherer(true, String(algorithm));
  };
  m.sign = function sign(algorithm, data, key, callback) {
    const r = out(callHost('c.sign', algorithm === null || algorithm === undefined ? null : String(algorithm), cryptoBytes(data), keySpec(key)));
    if (typeof callback === 'function') {
      later(callback, null, r);
      return undefined;
    }
    return r;
  };
  m.verify = function verify(algorithm, data, key, signature, callback) {
    const r = callHost(
      'c.verify',
      algorithm === null || algorithm === undefined ? null : String(algorithm),
      cryptoBytes(data),
      keySpec(key),
      cryptoBytes(signature, undefined, 'signature'),
    );
    if (typeof callback === 'function') {
      later(callback, null, r);
      return undefined;
    }
    return r;
  };
  m.publicEncrypt = rsa('publicEncrypt');
  m.privateDecrypt = rsa('privateDecrypt');
  m.privateEncrypt = rsa('privateEncrypt');
  m.publicDecrypt = rsa('publicDecrypt');
  m.generateKeyPairSync = generateKeyPairSync;
  m.generateKeyPair = function generateKeyPair(type, options, callback) {
    let value,
      error = null;
    try {
      value = generateKeyPairSync(type, options);
    } catch (e) {
      error = e;
    }
    PromiseThen(PromiseCtor.resolve(), function () {
      try {
        if (error) callback(error);
        else callback(null, value.publicKey, value.privateKey);
      } catch (e) {
        raiseFatal(e);
      }
    });
  };
  m.generateKeySync = function generateKeySync(type, options) {
    return makeKeyObject(callHost('c.secretGen', String(type), { length: options && options.length }));
  };
  m.generateKey = function generateKey(type, options, callback) {
    withCallback(m.generateKeySync, [type, options], callback);
  };
  m.pbkdf2Sync = pbkdf2Sync;
  m.pbkdf2 = function pbkdf2(password, salt, iterations, keylen, digest, callback) {
    withCallback(pbkdf2Sync, [password, salt, iterations, keylen, digest], callback);
  };
  m.scryptSync = scryptSync;
  m.scrypt = function scrypt(password, salt, keylen, options, callback) {
    if (typeof options === 'function') {
      callback = options;
      options = undefined;
    }
    withCallback(scryptSync, [password, salt, keylen, options], callback);
  };
  m.hkdfSync = hkdfSync;
  m.hkdf = function hkdf(digest, ikm, salt, info, keylen, callback) {
    withCallback(hkdfSync, [digest, ikm, salt, info, keylen], callback);
  };
  m.diffieHellman = function diffieHellman(options) {
    return toBuffer(new U8(callHost('c.diffieHellman', keySpec(options.privateKey), keySpec(options.publicKey))));
  };
  m.randomInt = randomInt;
  m.randomFillSync = function randomFillSync(buffer, offset, size) {
    const view = asBytes(buffer);
    if (!view) throw new TypeErrorCtor('The "buf" argument must be an instance of ArrayBuffer or ArrayBufferView.');
    const start = offset === undefined ? 0 : offset >>> 0;
    const n = size === undefined ? view.length - start : size >>> 0;
    if (start + n > view.length) throw new RangeErrorCtor('The value of "size + offset" is out of range.');
    view.set(new U8(callHost('randomBytes', n)), start);
    return buffer;
  };
  m.randomFill = function randomFill(buffer, offset, size, callback) {
    const cb = typeof offset === 'function' ? offset : typeof size === 'function' ? size : callback;
    withCallback(m.randomFillSync, [buffer, typeof offset === 'number' ? offset : undefined, typeof size === 'number' ? size : undefined], cb);
  };
  m.getCiphers = function getCiphers() {
    return getCryptoLists().ciphers.slice();
  };
  m.getCurves = function getCurves() {
    return getCryptoLists().curves.slice();
  };
  m.getFips = function getFips() {
    return 0;
  };
  Object.defineProperty(m, 'constants', {
    enumerable: true,
    get: function () {
      return getCryptoLists().constants;
    },
  });
  return m;
}
