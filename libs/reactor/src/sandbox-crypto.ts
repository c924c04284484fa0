import * as crypto from 'node:crypto';
import { types } from 'node:util';
import type { HostAnswer } from './sandbox-host-answer';

/**
 * The heavy half of a transform's `require('crypto')`: ciphers, keys, signatures, RSA encryption, key derivation and
 * key generation, run natively here, in the sandbox process (its deadline and address-space cap bound them; never in
 * the API process). Keys and data cross as bytes; a key reaches the sandbox as its DER (pkcs8, spki) or raw bytes and
 * comes back the same way, so nothing here outlives a call but the ciphers a context opened (CryptoState).
 *
 * Parameters a transform could raise to buy more than its deadline are bounded here (CRYPTO_BOUNDS): one call cannot
 * cost more than a fraction of a second, so the deadline, not a single call, is what ends a run.
 */
export const CRYPTO_BOUNDS = {
  maxPbkdf2Iterations: 2_000_000,
  maxDerivedKeyLength: 64 * 1024,
  /** scrypt's memory (128 * N * r bytes) at most this, as Node's own default maxmem. */
  maxScryptMemory: 32 * 1024 * 1024,
  maxRsaModulusLength: 4096,
  maxOpenCiphers: 256,
} as const;

/** Per-context state: the ciphers a transform has open (createCipheriv returns a handle to one). */
export interface CryptoState {
  ciphers: Map<number, crypto.Cipheriv | crypto.Decipheriv>;
  nextId: number;
}

export function newCryptoState(): CryptoState {
  return { ciphers: new Map(), nextId: 1 };
}

type KeyKind = 'secret' | 'public' | 'private';

/** A key as the sandbox sends it: a KeyObject's own bytes, or what the transform passed (PEM, DER, JWK, with options). */
interface KeySpec {
  kind?: KeyKind;
  der?: Uint8Array;
  key?: string | Uint8Array | Record<string, unknown>;
  format?: 'pem' | 'der' | 'jwk';
  type?: string;
  passphrase?: string | Uint8Array;
  encoding?: BufferEncoding;
  padding?: number;
  saltLength?: number;
  dsaEncoding?: 'der' | 'ieee-p1363';
  oaepHash?: string;
  oaepLabel?: Uint8Array;
}

function bytes(value: Buffer | Uint8Array): ArrayBuffer {
  const out = new ArrayBuffer(value.byteLength);
  new Uint8Array(out).set(value);
  return out;
}

function asSpec(value: unknown): KeySpec {
  if (typeof value === 'string' || types.isUint8Array(value)) return { key: value };
  if (value === null || typeof value !== 'object')
    throw new TypeError('The "key" argument must be of type string or an instance of Buffer, KeyObject or an object');
  return value as KeySpec;
}

/** The Node KeyObject of a spec, as `want` needs it (a private key answers for a public one, as Node's does). */
export function keyOf(value: unknown, want: KeyKind): crypto.KeyObject {
  const spec = asSpec(value);
  if (spec.kind !== undefined && spec.der !== undefined) {
    if (spec.kind === 'secret') return crypto.createSecretKey(spec.der);
    if (spec.kind === 'private') {
      const key = crypto.createPrivateKey({ key: Buffer.from(spec.der), format: 'der', type: 'pkcs8' });
      return want === 'public' ? crypto.createPublicKey(key) : key;
    }
    if (want === 'private') throw new TypeError('Invalid key object type public, expected private.');
    return crypto.createPublicKey({ key: Buffer.from(spec.der), format: 'der', type: 'spki' });
  }
  if (want === 'secret') return crypto.createSecretKey(spec.key as Uint8Array);
  const input = {
    key: spec.format === 'jwk' ? spec.key : typeof spec.key === 'string' ? spec.key : Buffer.from(spec.key as Uint8Array),
    format: spec.format,
    type: spec.type,
    passphrase: spec.passphrase,
    encoding: spec.encoding,
  } as crypto.PrivateKeyInput;
  return want === 'private' ? crypto.createPrivateKey(input) : crypto.createPublicKey(input as crypto.PublicKeyInput);
}

/** What the sandbox keeps of a key: its kind, its bytes, and what Node reports of it. */
export function keyRecord(key: crypto.KeyObject): Record<string, unknown> {
  const record: Record<string, unknown> = { kind: key.type };
  if (key.type === 'secret') {
    record.der = bytes(key.export());
    record.symmetricKeySize = key.symmetricKeySize;
    return record;
  }
  record.der = bytes(key.export({ format: 'der', type: key.type === 'private' ? 'pkcs8' : 'spki' }));
  record.asymmetricKeyType = key.asymmetricKeyType;
  const details: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(key.asymmetricKeyDetails ?? {})) details[name] = typeof value === 'bigint' ? Number(value) : value;
  record.asymmetricKeyDetails = details;
  return record;
}

function exportKey(spec: unknown, options: unknown): unknown {
  const key = keyOf(spec, asSpec(spec).kind ?? 'private');
  const opts = (options ?? {}) as { format?: string; type?: string; cipher?: string; passphrase?: string | Uint8Array };
  if (key.type === 'secret') return opts.format === 'jwk' ? key.export({ format: 'jwk' }) : bytes(key.export());
  if (opts.format === 'jwk') return key.export({ format: 'jwk' });
  const passphrase = opts.passphrase === undefined ? undefined : types.isUint8Array(opts.passphrase) ? Buffer.from(opts.passphrase) : opts.passphrase;
  const out = key.export({ format: (opts.format ?? 'pem') as 'pem', type: opts.type as 'pkcs8', cipher: opts.cipher, passphrase });
  return typeof out === 'string' ? out : bytes(out);
}

function checkModulus(options: Record<string, unknown>): void {
  const bits = options.modulusLength;
  if (typeof bits === 'number' && bits > CRYPTO_BOUNDS.maxRsaModulusLength) {
    throw new RangeError(`modulusLength is limited to ${CRYPTO_BOUNDS.maxRsaModulusLength} bits in the sandbox`);
  }
}

function generateKeyPair(type: unknown, options: unknown): unknown {
  const opts = { ...((options ?? {}) as Record<string, unknown>) };
  checkModulus(opts);
  if (typeof opts.publicExponent === 'number') opts.publicExponent = opts.publicExponent >>> 0;
  delete opts.publicKeyEncoding;
  delete opts.privateKeyEncoding;
  const pair = crypto.generateKeyPairSync(type as 'rsa', opts as unknown as crypto.RSAKeyPairKeyObjectOptions);
  return { publicKey: keyRecord(pair.publicKey), privateKey: keyRecord(pair.privateKey) };
}

function pbkdf2(password: unknown, salt: unknown, iterations: unknown, keylen: unknown, digest: unknown): ArrayBuffer {
  if (typeof iterations !== 'number' || iterations > CRYPTO_BOUNDS.maxPbkdf2Iterations) {
    throw new RangeError(`pbkdf2 iterations are limited to ${CRYPTO_BOUNDS.maxPbkdf2Iterations} in the sandbox`);
  }
  if (typeof keylen !== 'number' || keylen > CRYPTO_BOUNDS.maxDerivedKeyLength) throw new RangeError('pbkdf2 keylen is out of range');
  return bytes(crypto.pbkdf2Sync(password as Uint8Array, salt as Uint8Array, iterations, keylen, digest as string));
}

function scrypt(password: unknown, salt: unknown, keylen: unknown, options: unknown): ArrayBuffer {
  const opts = { ...((options ?? {}) as Record<string, number>) };
  const N = opts.N ?? opts.cost ?? 16384;
  const r = opts.r ?? opts.blockSize ?? 8;
  const p = opts.p ?? opts.parallelization ?? 1;
  if (typeof keylen !== 'number' || keylen > CRYPTO_BOUNDS.maxDerivedKeyLength) throw new RangeError('scrypt keylen is out of range');
  // Time grows with N * r * p, memory with N * r: both bounded by Node's own default memory bound.
  if (128 * N * r > CRYPTO_BOUNDS.maxScryptMemory || 128 * N * r * p > 4 * CRYPTO_BOUNDS.maxScryptMemory) {
    throw new RangeError(`scrypt parameters exceed the sandbox's limit (128 * N * r at most ${CRYPTO_BOUNDS.maxScryptMemory} bytes)`);
  }
  return bytes(crypto.scryptSync(password as Uint8Array, salt as Uint8Array, keylen, { N, r, p, maxmem: CRYPTO_BOUNDS.maxScryptMemory * 2 }));
}

function rsaCall(method: unknown, spec: unknown, data: unknown): ArrayBuffer {
  const s = asSpec(spec);
  const want: KeyKind = method === 'publicEncrypt' || method === 'publicDecrypt' ? 'public' : 'private';
  const key = { key: keyOf(spec, want), padding: s.padding, oaepHash: s.oaepHash, oaepLabel: s.oaepLabel };
  const fn = {
    publicEncrypt: crypto.publicEncrypt,
    privateDecrypt: crypto.privateDecrypt,
    privateEncrypt: crypto.privateEncrypt,
    publicDecrypt: crypto.publicDecrypt,
  }[method as 'publicEncrypt'];
  if (!fn) throw new Error('unsupported operation');
  return bytes(fn(key as crypto.RsaPublicKey, data as Uint8Array));
}

function signOptions(spec: unknown, want: KeyKind): crypto.SignKeyObjectInput {
  const s = asSpec(spec);
  return { key: keyOf(spec, want), padding: s.padding, saltLength: s.saltLength, dsaEncoding: s.dsaEncoding } as crypto.SignKeyObjectInput;
}

function cipherCall(state: CryptoState, op: string, a: unknown, b: unknown, c: unknown, d: unknown): unknown {
  if (op === 'cipherNew') {
    if (state.ciphers.size >= CRYPTO_BOUNDS.maxOpenCiphers) throw new Error(`at most ${CRYPTO_BOUNDS.maxOpenCiphers} ciphers may be open`);
    const { decipher, ...options } = (d ?? {}) as { decipher?: boolean; authTagLength?: number };
    const key = types.isUint8Array(b) ? b : keyOf(b, 'secret');
    const make = decipher ? crypto.createDecipheriv : crypto.createCipheriv;
    const cipher = make(a as string, key, (c ?? null) as Uint8Array | null, options as crypto.CipherGCMOptions);
    const id = state.nextId++;
    state.ciphers.set(id, cipher);
    return id;
  }
  const cipher = state.ciphers.get(a as number);
  if (!cipher) throw new Error('The cipher is closed');
  switch (op) {
    case 'cipherUpdate':
      return bytes(cipher.update(b as Uint8Array));
    case 'cipherFinal': {
      // Closed at its end: an encryption's authentication tag goes back with its last bytes.
      state.ciphers.delete(a as number);
      const last = bytes(cipher.final());
      let tag: ArrayBuffer | null = null;
      try {
        if ('getAuthTag' in cipher) tag = bytes((cipher as crypto.CipherGCM).getAuthTag());
      } catch {
        tag = null;
      }
      return [last, tag];
    }
    case 'cipherAAD':
      (cipher as crypto.CipherGCM).setAAD(b as Uint8Array, c === undefined ? undefined : { plaintextLength: c as number });
      return undefined;
    case 'cipherSetTag':
      (cipher as crypto.DecipherGCM).setAuthTag(b as Uint8Array);
      return undefined;
    case 'cipherPadding':
      cipher.setAutoPadding(b !== false);
      return undefined;
    default:
      throw new Error('unsupported operation');
  }
}

/** One crypto operation of a sandbox; a thrown error becomes its message, for the transform (never a host stack). */
export function cryptoCall(state: CryptoState, op: string, a: unknown, b: unknown, c: unknown, d: unknown): HostAnswer {
  try {
    switch (op) {
      case 'keyCreate':
        return [true, keyRecord(keyOf(b, a as KeyKind))];
      case 'keyExport':
        return [true, exportKey(a, b)];
      case 'keyGen':
        return [true, generateKeyPair(a, b)];
      case 'secretGen': {
        const length = (b as { length?: number } | undefined)?.length;
        if (typeof length !== 'number' || length > 8192) throw new RangeError('length is out of range');
        return [true, keyRecord(crypto.generateKeySync(a as 'hmac', { length }))];
      }
      case 'sign':
        return [true, bytes(crypto.sign((a ?? null) as string | null, b as Uint8Array, signOptions(c, 'private')))];
      case 'verify':
        return [true, crypto.verify((a ?? null) as string | null, b as Uint8Array, signOptions(c, 'public'), d as Uint8Array)];
      case 'rsa':
        return [true, rsaCall(a, b, c)];
      case 'pbkdf2': {
        const [password, salt, iterations, keylen, digest] = a as unknown[];
        return [true, pbkdf2(password, salt, iterations, keylen, digest)];
      }
      case 'scrypt':
        return [true, scrypt(a, b, c, d)];
      case 'hkdf': {
        const [digest, ikm, salt, info, keylen] = a as [string, Uint8Array, Uint8Array, Uint8Array, number];
        return [true, bytes(Buffer.from(crypto.hkdfSync(digest, ikm, salt, info, keylen)))];
      }
      case 'diffieHellman':
        return [true, bytes(crypto.diffieHellman({ privateKey: keyOf(a, 'private'), publicKey: keyOf(b, 'public') }))];
      case 'cryptoLists':
        return [true, JSON.stringify({ ciphers: crypto.getCiphers(), curves: crypto.getCurves(), constants: crypto.constants })];
      default:
        return [true, cipherCall(state, op, a, b, c, d)];
    }
  } catch (error) {
    return [false, error instanceof Error ? error.message : 'the operation failed'];
  }
}
