import { KeyObject, webcrypto } from 'node:crypto';
import { types } from 'node:util';
import { CRYPTO_BOUNDS, keyOf, keyRecord } from './sandbox-crypto';

/**
 * `crypto.subtle` of a transform: Node's own Web Crypto, run in the sandbox process. The sandbox keeps every CryptoKey
 * as bytes (see keyRecord) with its algorithm and usages; each call rebuilds the keys it names, runs, and answers
 * (through the invocation, as svc answers come) with bytes, a boolean, a JWK or new key records, as JSON where bytes
 * are `{"$b": base64}`. Keys are rebuilt extractable here, whatever the transform asked: the sandbox holds their bytes
 * anyway, and refuses to export a key the transform made non-extractable.
 */
type Packed = unknown;

export function pack(value: unknown): Packed {
  if (types.isUint8Array(value) || value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
    const view =
      value instanceof ArrayBuffer
        ? new Uint8Array(value)
        : new Uint8Array((value as ArrayBufferView).buffer, (value as ArrayBufferView).byteOffset, (value as ArrayBufferView).byteLength);
    return { $b: Buffer.from(view).toString('base64') };
  }
  if (Array.isArray(value)) return value.map(pack);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = pack(v);
    return out;
  }
  return value;
}

function unpack(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unpack);
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.$b === 'string') return Buffer.from(o.$b, 'base64');
    if (o.$key !== undefined) return cryptoKeyOf(o.$key);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(o)) out[k] = unpack(v);
    return out;
  }
  return value;
}

interface KeyRecord {
  kind: 'secret' | 'public' | 'private';
  der: Uint8Array;
  algorithm: webcrypto.AlgorithmIdentifier & Record<string, unknown>;
  usages: webcrypto.KeyUsage[];
}

/** Key-derivation keys, which Web Crypto never makes extractable: rebuilt as they were imported. */
const DERIVATION = new Set(['PBKDF2', 'HKDF']);

function algorithmName(algorithm: unknown): string {
  return String(typeof algorithm === 'string' ? algorithm : ((algorithm as { name?: unknown } | null)?.name ?? '')).toUpperCase();
}

function cryptoKeyOf(value: unknown): webcrypto.CryptoKey {
  const record = unpackRecord(value);
  const key = keyOf({ kind: record.kind, der: record.der }, record.kind);
  return key.toCryptoKey(record.algorithm as webcrypto.AlgorithmIdentifier, !DERIVATION.has(algorithmName(record.algorithm)), record.usages);
}

function unpackRecord(value: unknown): KeyRecord {
  const o = value as Record<string, unknown>;
  return {
    kind: o.kind as KeyRecord['kind'],
    der: Buffer.from((o.der as { $b: string }).$b, 'base64'),
    algorithm: unpack(o.algorithm) as KeyRecord['algorithm'],
    usages: o.usages as webcrypto.KeyUsage[],
  };
}

function record(key: webcrypto.CryptoKey, extractable: boolean): unknown {
  return pack({ ...keyRecord(KeyObject.from(key)), algorithm: key.algorithm, usages: key.usages, extractable, type: key.type });
}

function recordOf(result: webcrypto.CryptoKey | webcrypto.CryptoKeyPair, extractable: boolean): unknown {
  if ('privateKey' in result) return { pair: true, publicKey: record(result.publicKey, true), privateKey: record(result.privateKey, extractable) };
  return record(result, extractable);
}

/** Parameters that would buy more than a deadline in one call are refused before the call starts. */
function checkBounds(algorithm: unknown): void {
  if (algorithm === null || typeof algorithm !== 'object') return;
  const a = algorithm as { iterations?: unknown; modulusLength?: unknown };
  if (typeof a.iterations === 'number' && a.iterations > CRYPTO_BOUNDS.maxPbkdf2Iterations) {
    throw new RangeError(`PBKDF2 iterations are limited to ${CRYPTO_BOUNDS.maxPbkdf2Iterations} in the sandbox`);
  }
  if (typeof a.modulusLength === 'number' && a.modulusLength > CRYPTO_BOUNDS.maxRsaModulusLength) {
    throw new RangeError(`modulusLength is limited to ${CRYPTO_BOUNDS.maxRsaModulusLength} bits in the sandbox`);
  }
}

/** One subtle call; resolves to the JSON the sandbox's promise settles with ({ok} or {error, name}). */
export async function subtleCall(method: unknown, argsJson: unknown): Promise<string> {
  try {
    if (typeof method !== 'string' || typeof argsJson !== 'string') throw new TypeError('invalid subtle call');
    const args = unpack(JSON.parse(argsJson)) as unknown[];
    const subtle = webcrypto.subtle;
    let value: unknown;
    switch (method) {
      case 'digest':
        value = pack(await subtle.digest(args[0] as webcrypto.AlgorithmIdentifier, args[1] as Uint8Array));
        break;
      case 'importKey': {
        checkBounds(args[2]);
        const keyData = args[1] as Uint8Array | webcrypto.JsonWebKey;
        if (DERIVATION.has(algorithmName(args[2]))) {
          // Checked by importing it; kept as its raw bytes (there is no other form of such a key).
          const key = await subtle.importKey('raw', keyData as Uint8Array, args[2] as webcrypto.AlgorithmIdentifier, false, args[4] as webcrypto.KeyUsage[]);
          value = pack({ kind: 'secret', der: keyData, algorithm: key.algorithm, usages: key.usages, extractable: false, type: 'secret' });
          break;
        }
        const key = await subtle.importKey(
          args[0] as 'raw',
          keyData as Uint8Array,
          args[2] as webcrypto.AlgorithmIdentifier,
          true,
          args[4] as webcrypto.KeyUsage[],
        );
        value = recordOf(key, args[3] === true);
        break;
      }
      case 'exportKey': {
        const out = await subtle.exportKey(args[0] as 'jwk', args[1] as webcrypto.CryptoKey);
        value = pack(out);
        break;
      }
      case 'generateKey':
        checkBounds(args[0]);
        value = recordOf(await subtle.generateKey(args[0] as webcrypto.AlgorithmIdentifier, true, args[2] as webcrypto.KeyUsage[]), args[1] === true);
        break;
      case 'sign':
      case 'encrypt':
      case 'decrypt':
        value = pack(await subtle[method](args[0] as webcrypto.AlgorithmIdentifier, args[1] as webcrypto.CryptoKey, args[2] as Uint8Array));
        break;
      case 'verify':
        value = await subtle.verify(args[0] as webcrypto.AlgorithmIdentifier, args[1] as webcrypto.CryptoKey, args[2] as Uint8Array, args[3] as Uint8Array);
        break;
      case 'deriveBits':
        checkBounds(args[0]);
        value = pack(await subtle.deriveBits(args[0] as webcrypto.EcdhKeyDeriveParams, args[1] as webcrypto.CryptoKey, args[2] as number));
        break;
      case 'deriveKey':
        checkBounds(args[0]);
        value = recordOf(
          await subtle.deriveKey(
            args[0] as webcrypto.EcdhKeyDeriveParams,
            args[1] as webcrypto.CryptoKey,
            args[2] as webcrypto.AesDerivedKeyParams,
            true,
            args[4] as webcrypto.KeyUsage[],
          ),
          args[3] === true,
        );
        break;
      case 'wrapKey':
        value = pack(
          await subtle.wrapKey(args[0] as 'raw', args[1] as webcrypto.CryptoKey, args[2] as webcrypto.CryptoKey, args[3] as webcrypto.AlgorithmIdentifier),
        );
        break;
      case 'unwrapKey':
        value = recordOf(
          await subtle.unwrapKey(
            args[0] as 'raw',
            args[1] as Uint8Array,
            args[2] as webcrypto.CryptoKey,
            args[3] as webcrypto.AlgorithmIdentifier,
            args[4] as webcrypto.AlgorithmIdentifier,
            true,
            args[6] as webcrypto.KeyUsage[],
          ),
          args[5] === true,
        );
        break;
      default:
        throw new TypeError(`crypto.subtle.${method} is not supported`);
    }
    return JSON.stringify({ ok: value });
  } catch (error) {
    const e = error as { name?: unknown; message?: unknown };
    return JSON.stringify({ error: typeof e.message === 'string' ? e.message : 'The operation failed', name: typeof e.name === 'string' ? e.name : 'Error' });
  }
}
