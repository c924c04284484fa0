import * as crypto from 'node:crypto';
import { types } from 'node:util';
import { keyOf, keyRecord } from './sandbox-crypto';
import type { HostAnswer } from './sandbox-host-answer';

/**
 * Key agreement and certificates for a transform's `require('crypto')`: `createECDH`, `createDiffieHellman`,
 * `getDiffieHellman`, `X509Certificate` and `Certificate` (SPKAC), run by Node here, in the sandbox process. The
 * sandbox keeps each object's state as bytes (an ECDH's curve and keys, a Diffie-Hellman's prime, generator and keys, a
 * certificate's DER) and every call rebuilds what it needs from them, so an object lives as long as the transform
 * keeps it (in module scope across the runs of a warm context too) and nothing here outlives a call, but the
 * Diffie-Hellman objects of custom primes a context keeps (below).
 *
 * Node checks a custom Diffie-Hellman prime when it is given (OpenSSL's DH_check: primality tests whose cost grows
 * with the fourth power of its length) and generates one when a length is given: both are bounded (EXCHANGE_BOUNDS)
 * so that one call stays well within a transform's deadline.
 */
export const EXCHANGE_BOUNDS = {
  /** A prime given to createDiffieHellman, in bits (the RFC 3526 groups of getDiffieHellman go up to 8,192). */
  maxDhPrimeBits: 2048,
  /** A prime createDiffieHellman generates, in bits. */
  maxDhGeneratedPrimeBits: 1024,
  /** Certificates, SPKACs and keys handed to these calls, in bytes. */
  maxInputBytes: 256 * 1024,
  /** Diffie-Hellman objects of custom primes one context keeps (each checked once). */
  maxKeptDh: 4,
} as const;

/** Per-context: the Diffie-Hellman objects of custom primes, checked once (their keys are set again on every call). */
export interface ExchangeState {
  dh: Map<string, { dh: crypto.DiffieHellman; pristine: boolean }>;
}

export function newExchangeState(): ExchangeState {
  return { dh: new Map() };
}

function bytes(value: Buffer | Uint8Array): ArrayBuffer {
  const out = new ArrayBuffer(value.byteLength);
  new Uint8Array(out).set(value);
  return out;
}

function input(value: unknown, what: string): Buffer {
  if (!types.isUint8Array(value)) throw new TypeError(`The "${what}" argument must be an instance of Buffer, TypedArray, or DataView.`);
  if (value.byteLength > EXCHANGE_BOUNDS.maxInputBytes) throw new RangeError(`The "${what}" argument is larger than the sandbox allows`);
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

// ---------------------------------------------------------------- ECDH: state { curve, priv }
function ecdh(op: string, curve: unknown, priv: unknown, other: unknown): unknown {
  const e = crypto.createECDH(String(curve));
  switch (op) {
    case 'new':
      return undefined;
    case 'generate':
      e.generateKeys();
      return [bytes(e.getPrivateKey()), bytes(e.getPublicKey())];
    case 'setPrivate':
      e.setPrivateKey(input(priv, 'key'));
      return [bytes(e.getPrivateKey()), bytes(e.getPublicKey())];
    case 'compute':
      if (priv !== null) e.setPrivateKey(input(priv, 'key'));
      return bytes(e.computeSecret(input(other, 'otherPublicKey')));
    case 'convert':
      return bytes(crypto.ECDH.convertKey(input(other, 'key'), String(curve), undefined, undefined, priv as 'compressed') as Buffer);
    default:
      throw new Error('unsupported operation');
  }
}

// ---------------------------------------------------------------- Diffie-Hellman: state { group | prime, generator, priv }
interface DhSpec {
  group?: string;
  prime?: Uint8Array;
  length?: number;
  generator?: Uint8Array | number;
}

function dhKey(prime: Uint8Array, generator: Uint8Array): string {
  return crypto.createHash('sha256').update(prime).update(':').update(generator).digest('hex');
}

function keep(state: ExchangeState, key: string, dh: crypto.DiffieHellman, pristine: boolean): void {
  state.dh.delete(key);
  state.dh.set(key, { dh, pristine });
  while (state.dh.size > EXCHANGE_BOUNDS.maxKeptDh) state.dh.delete(state.dh.keys().next().value as string);
}

function dhNew(state: ExchangeState, spec: DhSpec): unknown {
  if (spec.group !== undefined) {
    const dh = crypto.getDiffieHellman(String(spec.group));
    return { prime: bytes(dh.getPrime()), generator: bytes(dh.getGenerator()), verifyError: dh.verifyError };
  }
  const generator = typeof spec.generator === 'number' ? spec.generator : spec.generator === undefined ? undefined : input(spec.generator, 'generator');
  let dh: crypto.DiffieHellman;
  if (typeof spec.length === 'number') {
    if (!Number.isInteger(spec.length) || spec.length > EXCHANGE_BOUNDS.maxDhGeneratedPrimeBits) {
      throw new RangeError(`createDiffieHellman generates primes of at most ${EXCHANGE_BOUNDS.maxDhGeneratedPrimeBits} bits in the sandbox`);
    }
    dh = generator === undefined ? crypto.createDiffieHellman(spec.length) : crypto.createDiffieHellman(spec.length, generator as number);
  } else {
    const prime = input(spec.prime, 'prime');
    if (prime.byteLength * 8 > EXCHANGE_BOUNDS.maxDhPrimeBits + 7) {
      throw new RangeError(
        `createDiffieHellman takes primes of at most ${EXCHANGE_BOUNDS.maxDhPrimeBits} bits in the sandbox (getDiffieHellman offers larger groups)`,
      );
    }
    if (types.isUint8Array(generator) && generator.byteLength > prime.byteLength) throw new RangeError('The generator is larger than the prime');
    dh = generator === undefined ? crypto.createDiffieHellman(prime) : crypto.createDiffieHellman(prime, generator as Buffer);
  }
  const record = { prime: bytes(dh.getPrime()), generator: bytes(dh.getGenerator()), verifyError: dh.verifyError };
  keep(state, dhKey(dh.getPrime(), dh.getGenerator()), dh, true);
  return record;
}

/** The Node object for a state: a group's is cheap to make; a custom prime's is the one this context keeps, or made again. */
function dhFor(state: ExchangeState, spec: DhSpec, fresh: boolean): crypto.DiffieHellman {
  if (spec.group !== undefined) return crypto.getDiffieHellman(String(spec.group)) as unknown as crypto.DiffieHellman;
  const prime = input(spec.prime, 'prime');
  const generator = input(spec.generator, 'generator');
  if (prime.byteLength * 8 > EXCHANGE_BOUNDS.maxDhPrimeBits + 7) throw new RangeError('The prime is larger than the sandbox allows');
  const key = dhKey(prime, generator);
  const kept = state.dh.get(key);
  // A fresh object is needed to generate a private key (one that has a key keeps it); the kept one serves once.
  if (kept !== undefined && (!fresh || kept.pristine)) {
    keep(state, key, kept.dh, false);
    return kept.dh;
  }
  const dh = crypto.createDiffieHellman(prime, generator);
  keep(state, key, dh, false);
  return dh;
}

function dh(state: ExchangeState, op: string, spec: DhSpec, priv: unknown, other: unknown): unknown {
  if (op === 'new') return dhNew(state, spec);
  const key = priv === null ? null : input(priv, 'key');
  if (key !== null && key.byteLength > (spec.prime?.byteLength ?? 1024)) throw new RangeError('The private key is larger than the prime');
  const object = dhFor(state, spec, key === null && op === 'generate');
  // A group's object has no setPrivateKey of its own; its native handle does (the key it generated before, kept by the
  // sandbox, is set back).
  if (key !== null) (crypto.DiffieHellman.prototype.setPrivateKey as (this: crypto.DiffieHellman, key: Buffer) => void).call(object, key);
  switch (op) {
    case 'generate':
      object.generateKeys();
      return [bytes(object.getPrivateKey()), bytes(object.getPublicKey())];
    case 'compute':
      return bytes(object.computeSecret(input(other, 'otherPublicKey')));
    default:
      throw new Error('unsupported operation');
  }
}

// ---------------------------------------------------------------- X509Certificate: state { der }
/** The fields a sandbox X509Certificate has as getters, read at parse: the runtime gets this list in its limits. */
export const X509_FIELDS = [
  'subject',
  'subjectAltName',
  'issuer',
  'infoAccess',
  'validFrom',
  'validTo',
  'fingerprint',
  'fingerprint256',
  'fingerprint512',
  'keyUsage',
  'serialNumber',
  'signatureAlgorithm',
  'signatureAlgorithmOid',
  'ca',
] as const;

function x509(op: string, der: unknown, a: unknown, b: unknown): unknown {
  const cert = new crypto.X509Certificate(input(der, 'buffer'));
  switch (op) {
    case 'parse': {
      const record: Record<string, unknown> = { raw: bytes(cert.raw), pem: cert.toString() };
      for (const field of X509_FIELDS) record[field] = (cert as unknown as Record<string, unknown>)[field];
      record.validFromMs = cert.validFromDate?.getTime();
      record.validToMs = cert.validToDate?.getTime();
      return record;
    }
    case 'publicKey':
      return keyRecord(cert.publicKey);
    case 'checkHost':
      return cert.checkHost(String(a), b as crypto.X509CheckOptions);
    case 'checkEmail':
      return cert.checkEmail(String(a), b as crypto.X509CheckOptions);
    case 'checkIP':
      return cert.checkIP(String(a));
    case 'checkIssued':
      return cert.checkIssued(new crypto.X509Certificate(input(a, 'otherCert')));
    case 'checkPrivateKey':
      return cert.checkPrivateKey(keyOf(a, 'private'));
    case 'verify':
      return cert.verify(keyOf(a, 'public'));
    case 'legacy': {
      const legacy = cert.toLegacyObject() as unknown as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(legacy)) out[name] = Buffer.isBuffer(value) ? { bytes: bytes(value) } : value;
      return out;
    }
    default:
      throw new Error('unsupported operation');
  }
}

function spkac(op: string, data: unknown): unknown {
  const spkacBytes = input(data, 'spkac');
  switch (op) {
    case 'verify':
      return crypto.Certificate.verifySpkac(spkacBytes);
    case 'challenge':
      return bytes(crypto.Certificate.exportChallenge(spkacBytes));
    case 'publicKey':
      return bytes(crypto.Certificate.exportPublicKey(spkacBytes));
    default:
      throw new Error('unsupported operation');
  }
}

/**
 * One call of the sandbox (ops `x.<family>.<op>`). Node's errors go back as data, `{error: [name, code, message]}`, so
 * the sandbox throws what Node would have (the class, the code, the message), never a host stack.
 */
export function exchangeCall(state: ExchangeState, op: string, a: unknown, b: unknown, c: unknown): HostAnswer {
  const dot = op.indexOf('.');
  const family = op.slice(0, dot);
  const name = op.slice(dot + 1);
  try {
    switch (family) {
      case 'ecdh':
        return [true, { value: ecdh(name, a, b, c) }];
      case 'dh':
        return [true, { value: dh(state, name, (a ?? {}) as DhSpec, b ?? null, c) }];
      case 'x509':
        return [true, { value: x509(name, a, b, c) }];
      case 'spkac':
        return [true, { value: spkac(name, a) }];
      default:
        return [false, 'unsupported operation'];
    }
  } catch (error) {
    const e = error as { name?: unknown; code?: unknown; message?: unknown };
    return [
      true,
      {
        error: [
          typeof e?.name === 'string' ? e.name : 'Error',
          typeof e?.code === 'string' ? e.code : undefined,
          typeof e?.message === 'string' ? e.message : 'the operation failed',
        ],
      },
    ];
  }
}
