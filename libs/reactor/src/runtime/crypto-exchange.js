// The sandbox runtime: ECDH, Diffie-Hellman, X509Certificate and Certificate (SPKAC) of require('crypto'), computed by
// Node in the sandbox process (sandbox-crypto-exchange.ts). Each object keeps its state here, as bytes (a curve and
// keys, a prime, a generator and keys, a certificate's DER), and hands them over with every call.
/* global ErrorCtor, ObjectDefineProperty, ObjectKeys, RangeErrorCtor, TypeErrorCtor, U8, WeakMapCtor, WeakMapGet, WeakMapSet, asBytes,
   bytesForHost, callHost, cryptoBytes, define, encodeString, getBuffer, keyObjectState, keySpec, lazy, limits, makeKeyObject, out, toBuffer */
/* exported addExchangeCrypto */
function nodeError(Ctor, code, message) {
  const e = new Ctor(message);
  if (code !== undefined) define(e, 'code', code);
  return e;
}
// A call whose failure is Node's own error (its class, code and message), rebuilt here.
function exchange(op, a, b, c) {
  const r = callHost('x.' + op, a, b, c);
  if (r.error === undefined) return r.value;
  const name = r.error[0];
  throw nodeError(name === 'TypeError' ? TypeErrorCtor : name === 'RangeError' ? RangeErrorCtor : ErrorCtor, r.error[1], r.error[2]);
}
// What Node's argument errors append: what was received instead.
function received(value) {
  if (value === null || value === undefined) return ' Received ' + value;
  if (typeof value === 'function') return ' Received function ' + value.name;
  if (typeof value === 'object')
    return value.constructor && value.constructor.name ? ' Received an instance of ' + value.constructor.name : ' Received [Object: null prototype] {}';
  let shown = typeof value === 'string' ? "'" + value + "'" : String(value);
  if (shown.length > 28) shown = shown.slice(0, 25) + '...';
  return ' Received type ' + typeof value + ' (' + shown + ')';
}
function argType(name, what, value) {
  return nodeError(TypeErrorCtor, 'ERR_INVALID_ARG_TYPE', 'The "' + name + '" argument must be ' + what + '.' + received(value));
}
function stateIn(map, self) {
  const st = WeakMapGet(map, self);
  if (!st) throw new TypeErrorCtor('Illegal invocation');
  return st;
}
function copyOut(bytes, encoding) {
  return out(bytes.slice().buffer, encoding);
}
function invalidState(message) {
  return nodeError(ErrorCtor, 'ERR_CRYPTO_INVALID_STATE', message);
}
function failed(message) {
  return nodeError(ErrorCtor, 'ERR_CRYPTO_OPERATION_FAILED', message);
}

const ecdhState = new WeakMapCtor();
const getECDH = lazy(function () {
  class ECDH {
    constructor(curve) {
      if (typeof curve !== 'string') throw argType('curve', 'of type string', curve);
      exchange('ecdh.new', curve);
      WeakMapSet(ecdhState, this, { curve: curve, priv: null, pub: null });
    }
    static convertKey(key, curve, inputEncoding, outputEncoding, format) {
      return out(
        exchange('ecdh.convert', String(curve), format === undefined ? 'uncompressed' : format, cryptoBytes(key, inputEncoding, 'key')),
        outputEncoding,
      );
    }
    generateKeys(encoding, format) {
      const st = stateIn(ecdhState, this);
      const keys = exchange('ecdh.generate', st.curve);
      st.priv = new U8(keys[0]);
      st.pub = new U8(keys[1]);
      return this.getPublicKey(encoding, format);
    }
    computeSecret(key, inputEncoding, outputEncoding) {
      const st = stateIn(ecdhState, this);
      return out(exchange('ecdh.compute', st.curve, st.priv, cryptoBytes(key, inputEncoding, 'key')), outputEncoding);
    }
    getPrivateKey(encoding) {
      const st = stateIn(ecdhState, this);
      if (st.priv === null) throw failed('Failed to get ECDH private key');
      return copyOut(st.priv, encoding);
    }
    getPublicKey(encoding, format) {
      const st = stateIn(ecdhState, this);
      if (st.pub === null) throw failed('Failed to get ECDH public key');
      if (format === undefined || format === 'uncompressed') return copyOut(st.pub, encoding);
      return out(exchange('ecdh.convert', st.curve, format, bytesForHost(st.pub)), encoding);
    }
    setPrivateKey(key, encoding) {
      const st = stateIn(ecdhState, this);
      const keys = exchange('ecdh.setPrivate', st.curve, cryptoBytes(key, encoding, 'key'));
      st.priv = new U8(keys[0]);
      st.pub = new U8(keys[1]);
      return this;
    }
    // Deprecated in Node: sets the public key alone (checked on the curve).
    setPublicKey(key, encoding) {
      const st = stateIn(ecdhState, this);
      st.pub = new U8(exchange('ecdh.convert', st.curve, 'uncompressed', cryptoBytes(key, encoding, 'key')));
      return this;
    }
  }
  return ECDH;
});

// Diffie-Hellman: a custom prime (createDiffieHellman) or one of the RFC 2409/3526 groups (getDiffieHellman).
const dhState = new WeakMapCtor();
function dhSpec(st) {
  return st.group === null ? { prime: bytesForHost(st.prime), generator: bytesForHost(st.generator) } : { group: st.group, prime: bytesForHost(st.prime) };
}
function initDh(self, spec, group) {
  const r = exchange('dh.new', spec);
  WeakMapSet(dhState, self, { group: group, prime: new U8(r.prime), generator: new U8(r.generator), priv: null, pub: null });
  ObjectDefineProperty(self, 'verifyError', { value: r.verifyError, enumerable: true, writable: false, configurable: false });
}
const dhMethods = {
  generateKeys: function generateKeys(encoding) {
    const st = stateIn(dhState, this);
    const keys = exchange('dh.generate', dhSpec(st), st.priv === null ? null : bytesForHost(st.priv));
    st.priv = new U8(keys[0]);
    st.pub = new U8(keys[1]);
    return copyOut(st.pub, encoding);
  },
  computeSecret: function computeSecret(key, inputEncoding, outputEncoding) {
    const st = stateIn(dhState, this);
    if (st.priv === null) throw failed('Failed to compute shared secret');
    return out(exchange('dh.compute', dhSpec(st), bytesForHost(st.priv), cryptoBytes(key, inputEncoding, 'key')), outputEncoding);
  },
  getPrime: function getPrime(encoding) {
    return copyOut(stateIn(dhState, this).prime, encoding);
  },
  getGenerator: function getGenerator(encoding) {
    return copyOut(stateIn(dhState, this).generator, encoding);
  },
  getPublicKey: function getPublicKey(encoding) {
    const st = stateIn(dhState, this);
    if (st.pub === null) throw invalidState('No public key - did you forget to generate one?');
    return copyOut(st.pub, encoding);
  },
  getPrivateKey: function getPrivateKey(encoding) {
    const st = stateIn(dhState, this);
    if (st.priv === null) throw invalidState('No private key - did you forget to generate one?');
    return copyOut(st.priv, encoding);
  },
};
function dhBytes(value, encoding, what) {
  return typeof value === 'string' ? bytesForHost(encodeString(value, encoding === 'buffer' ? undefined : encoding)) : cryptoBytes(value, undefined, what);
}
const getDhClasses = lazy(function () {
  // As Node's: callable without `new`; an encoding that is not one is the generator (createDiffieHellman(prime, generator)).
  function DiffieHellman(sizeOrKey, keyEncoding, generator, genEncoding) {
    if (!(this instanceof DiffieHellman)) return new DiffieHellman(sizeOrKey, keyEncoding, generator, genEncoding);
    if (keyEncoding && keyEncoding !== 'buffer' && !getBuffer().isEncoding(keyEncoding)) {
      genEncoding = generator;
      generator = keyEncoding;
      keyEncoding = undefined;
    }
    const spec = {};
    if (typeof sizeOrKey === 'number') {
      if (!Number.isInteger(sizeOrKey)) throw nodeError(RangeErrorCtor, 'ERR_OUT_OF_RANGE', 'The value of "sizeOrKey" is out of range. It must be an integer.');
      spec.length = sizeOrKey;
    } else if (typeof sizeOrKey === 'string' || asBytes(sizeOrKey)) {
      spec.prime = dhBytes(sizeOrKey, keyEncoding, 'sizeOrKey');
    } else {
      throw argType('sizeOrKey', 'one of type number or string or an instance of ArrayBuffer, Buffer, TypedArray, or DataView', sizeOrKey);
    }
    if (generator !== undefined && generator !== null && generator !== 0 && generator !== '') {
      spec.generator = typeof generator === 'number' ? generator : dhBytes(generator, genEncoding, 'generator');
    }
    initDh(this, spec, null);
  }
  for (const name of ObjectKeys(dhMethods)) define(DiffieHellman.prototype, name, dhMethods[name]);
  define(DiffieHellman.prototype, 'setPublicKey', function setPublicKey(key, encoding) {
    stateIn(dhState, this).pub = new U8(cryptoBytes(key, encoding, 'key'));
    return this;
  });
  define(DiffieHellman.prototype, 'setPrivateKey', function setPrivateKey(key, encoding) {
    stateIn(dhState, this).priv = new U8(cryptoBytes(key, encoding, 'key'));
    return this;
  });
  function DiffieHellmanGroup(name) {
    if (!(this instanceof DiffieHellmanGroup)) return new DiffieHellmanGroup(name);
    initDh(this, { group: String(name) }, String(name));
  }
  for (const name of ObjectKeys(dhMethods)) define(DiffieHellmanGroup.prototype, name, dhMethods[name]);
  return { DiffieHellman: DiffieHellman, DiffieHellmanGroup: DiffieHellmanGroup };
});

// X509Certificate: parsed once (every field comes back at once); the checks send its DER again. Its fields' names are
// the host's list (X509_FIELDS in sandbox-crypto-exchange.ts), handed over in the limits.
const x509State = new WeakMapCtor();
function checkOptions(options) {
  if (options === undefined || options === null) return undefined;
  const o = {};
  for (const k of ['subject', 'wildcards', 'partialWildcards', 'multiLabelWildcards', 'singleLabelSubdomains']) if (options[k] !== undefined) o[k] = options[k];
  return o;
}
const getX509 = lazy(function () {
  class X509Certificate {
    constructor(buffer) {
      const bytes = typeof buffer === 'string' ? encodeString(buffer, 'utf8') : asBytes(buffer);
      if (bytes === null) throw argType('buffer', 'of type string or an instance of Buffer, TypedArray, or DataView', buffer);
      const r = exchange('x509.parse', bytesForHost(bytes));
      WeakMapSet(x509State, this, { der: new U8(r.raw), record: r, raw: null, publicKey: null });
    }
    get raw() {
      const st = stateIn(x509State, this);
      if (st.raw === null) st.raw = copyOut(st.der);
      return st.raw;
    }
    get publicKey() {
      const st = stateIn(x509State, this);
      if (st.publicKey === null) st.publicKey = makeKeyObject(exchange('x509.publicKey', bytesForHost(st.der)));
      return st.publicKey;
    }
    get validFromDate() {
      return new Date(stateIn(x509State, this).record.validFromMs);
    }
    get validToDate() {
      return new Date(stateIn(x509State, this).record.validToMs);
    }
    get issuerCertificate() {
      return undefined;
    }
    checkHost(name, options) {
      return exchange('x509.checkHost', bytesForHost(stateIn(x509State, this).der), String(name), checkOptions(options));
    }
    checkEmail(email, options) {
      return exchange('x509.checkEmail', bytesForHost(stateIn(x509State, this).der), String(email), checkOptions(options));
    }
    checkIP(ip) {
      return exchange('x509.checkIP', bytesForHost(stateIn(x509State, this).der), String(ip));
    }
    checkIssued(otherCert) {
      const other = WeakMapGet(x509State, otherCert);
      if (!other) throw argType('otherCert', 'an instance of X509Certificate', otherCert);
      return exchange('x509.checkIssued', bytesForHost(stateIn(x509State, this).der), bytesForHost(other.der));
    }
    checkPrivateKey(pkey) {
      return exchange('x509.checkPrivateKey', bytesForHost(stateIn(x509State, this).der), asKeyObject(pkey, 'private'));
    }
    verify(pkey) {
      return exchange('x509.verify', bytesForHost(stateIn(x509State, this).der), asKeyObject(pkey, 'public'));
    }
    toString() {
      return stateIn(x509State, this).record.pem;
    }
    toJSON() {
      return stateIn(x509State, this).record.pem;
    }
    toLegacyObject() {
      const legacy = exchange('x509.legacy', bytesForHost(stateIn(x509State, this).der));
      for (const k of ObjectKeys(legacy))
        if (legacy[k] !== null && typeof legacy[k] === 'object' && legacy[k].bytes !== undefined) legacy[k] = toBuffer(new U8(legacy[k].bytes));
      return legacy;
    }
  }
  for (const name of limits.x509Fields) {
    ObjectDefineProperty(X509Certificate.prototype, name, {
      configurable: true,
      get: function () {
        return stateIn(x509State, this).record[name];
      },
    });
  }
  return X509Certificate;
});
// Node's checkPrivateKey and verify take KeyObjects only.
function asKeyObject(key, type) {
  const st = WeakMapGet(keyObjectState, key);
  if (!st) throw argType('pkey', 'an instance of KeyObject', key);
  if (st.kind !== type) {
    const shown = { private: 'PrivateKeyObject', public: 'PublicKeyObject', secret: 'SecretKeyObject' }[st.kind];
    throw nodeError(TypeErrorCtor, 'ERR_INVALID_ARG_VALUE', "The argument 'pkey' is invalid. Received " + shown + ' {}');
  }
  return keySpec(key);
}

const getCertificate = lazy(function () {
  function Certificate() {
    if (!(this instanceof Certificate)) return new Certificate();
  }
  const statics = {
    verifySpkac: function verifySpkac(spkac, encoding) {
      return exchange('spkac.verify', cryptoBytes(spkac, encoding, 'spkac'));
    },
    exportChallenge: function exportChallenge(spkac, encoding) {
      return out(exchange('spkac.challenge', cryptoBytes(spkac, encoding, 'spkac')));
    },
    exportPublicKey: function exportPublicKey(spkac, encoding) {
      return out(exchange('spkac.publicKey', cryptoBytes(spkac, encoding, 'spkac')));
    },
  };
  for (const name of ObjectKeys(statics)) {
    define(Certificate, name, statics[name]);
    define(Certificate.prototype, name, statics[name]);
  }
  return Certificate;
});

// The classes are built on first use (most transforms that require crypto use none of them).
function addExchangeCrypto(m) {
  const classes = {
    ECDH: getECDH,
    DiffieHellman: function () {
      return getDhClasses().DiffieHellman;
    },
    DiffieHellmanGroup: function () {
      return getDhClasses().DiffieHellmanGroup;
    },
    X509Certificate: getX509,
    Certificate: getCertificate,
  };
  for (const name of ObjectKeys(classes)) ObjectDefineProperty(m, name, { enumerable: true, configurable: true, get: classes[name] });
  m.createECDH = function createECDH(curve) {
    return new (getECDH())(curve);
  };
  m.createDiffieHellman = function createDiffieHellman(sizeOrKey, keyEncoding, generator, genEncoding) {
    return new (getDhClasses().DiffieHellman)(sizeOrKey, keyEncoding, generator, genEncoding);
  };
  m.getDiffieHellman = function getDiffieHellman(name) {
    return new (getDhClasses().DiffieHellmanGroup)(name);
  };
  m.createDiffieHellmanGroup = m.getDiffieHellman;
  return m;
}
