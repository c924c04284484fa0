import { createHmac, getHashes, hash, randomBytes, randomUUID } from 'node:crypto';
import { types } from 'node:util';
import type { Invocation } from './invocation';
import { cryptoCall, newCryptoState, type CryptoState } from './sandbox-crypto';
import { exchangeCall, newExchangeState, type ExchangeState } from './sandbox-crypto-exchange';
import { subtleCall } from './sandbox-subtle';
import { crc32, zlibCall, zlibConstants } from './sandbox-zlib';
import type { HostAnswer } from './sandbox-host-answer';

/** The invocation currently allowed to use a context's host function; null once it has ended. */
export interface ContextBinding {
  invocation: Invocation | null;
  /** Runs a bundled module's script in this context (see ModuleScripts); an error message, or null once it ran. */
  loadModule?: (name: string) => string | null;
  /** The ciphers this context's transform has open (made on first use). */
  crypto?: CryptoState;
  /** The Diffie-Hellman objects this context keeps (made on first use; kept across the runs of a warm context). */
  exchange?: ExchangeState;
}

/** Every digest OpenSSL offers Node here; HMAC_BLOCKS those whose HMAC is computed over the one-shot hash. */
export const HASHES = new Set(getHashes().map((name) => name.toLowerCase()));
const HMAC_BLOCKS = new Map([
  ['md5', 64],
  ['sha1', 64],
  ['sha256', 64],
  ['sha384', 128],
  ['sha512', 128],
]);
const URL_PARTS = new Set(['href', 'protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname', 'search', 'hash']);
const MAX_URL_LENGTH = 64 * 1024;

export interface HostFunctionLimits {
  maxDigestInput: number;
  maxRandomBytes: number;
  maxBufferLength: number;
}

/**
 * The single host function a sandbox context receives (as an isolated-vm Callback, captured only by
 * the runtime's closures). Work that needs Node — crypto, WHATWG URL parsing — runs here on
 * arguments isolated-vm has already copied out of the sandbox; anything else is refused.
 */
export function createHostFunction(binding: ContextBinding, limits: HostFunctionLimits) {
  return (op: unknown, a?: unknown, b?: unknown, c?: unknown, d?: unknown): HostAnswer => {
    try {
      switch (op) {
        case 'log':
          binding.invocation?.log(a, b);
          return [true, undefined];
        case 'hash':
          return digest(a, null, b, c, limits);
        case 'hmac':
          return digest(a, b, c, d, limits);
        case 'randomBytes':
          if (typeof a !== 'number' || !Number.isInteger(a) || a < 0 || a > limits.maxRandomBytes) {
            return [false, 'randomBytes size is out of range'];
          }
          return [true, exactArrayBuffer(randomBytes(a))];
        case 'randomUUID':
          return [true, randomUUID()];
        case 'url':
          return parseUrl(a, b);
        case 'module': {
          if (typeof a !== 'string' || !binding.loadModule) return [false, 'modules are not available'];
          const problem = binding.loadModule(a);
          return problem === null ? [true, undefined] : [false, problem];
        }
        case 'hrtime':
          return [true, Number(process.hrtime.bigint())];
        case 'zlib':
          // A quarter of the sandbox's buffer limit (its memory limit): the output is copied into the isolate.
          return zlibCall(a, b, c, Math.floor(limits.maxBufferLength / 4));
        case 'zlibConstants':
          return zlibConstants();
        case 'crc32':
          return crc32(a, b);
        case 'urlSet':
          return setUrlPart(a, b, c);
        case 'svc':
        case 'timer': {
          const invocation = binding.invocation;
          if (!invocation) return [false, 'the invocation has ended'];
          const problem = op === 'svc' ? invocation.startSvc(a, b) : invocation.startTimer(a, b);
          return problem === null ? [true, undefined] : [false, problem];
        }
        case 'subtle': {
          const invocation = binding.invocation;
          if (!invocation) return [false, 'the invocation has ended'];
          const problem = invocation.startTask(a, () => subtleCall(b, c));
          return problem === null ? [true, undefined] : [false, problem];
        }
        case 'http': {
          const invocation = binding.invocation;
          if (!invocation) return [false, 'the invocation has ended'];
          const problem = invocation.startHttp(a, b, c);
          return problem === null ? [true, undefined] : [false, problem];
        }
        case 'httpAbort':
          binding.invocation?.abortHttp(a);
          return [true, undefined];
        case 'clearTimer':
          binding.invocation?.clearTimer(a);
          return [true, undefined];
        default:
          if (typeof op === 'string' && op.startsWith('c.')) return cryptoCall((binding.crypto ??= newCryptoState()), op.slice(2), a, b, c, d);
          if (typeof op === 'string' && op.startsWith('x.')) return exchangeCall((binding.exchange ??= newExchangeState()), op.slice(2), a, b, c);
          return [false, 'unsupported operation'];
      }
    } catch {
      return [false, 'the operation failed'];
    }
  };
}

/** Encodings a digest may be answered in as text, encoded here rather than by the sandbox's script. */
const DIGEST_ENCODINGS = new Set(['hex', 'base64']);

/**
 * A hash or HMAC of bytes the sandbox copied out: its bytes, or its text in `encoding` (hex or base64; any
 * other value: the bytes, which the sandbox encodes itself).
 */
function digest(algorithm: unknown, key: unknown, data: unknown, encoding: unknown, limits: HostFunctionLimits): HostAnswer {
  if (typeof algorithm !== 'string' || !HASHES.has(algorithm)) return [false, 'Digest method not supported'];
  // UTF-8 text comes as a string, anything else as bytes. isolated-vm may materialise copies in another
  // realm (Jest runs code in a vm context): no instanceof.
  const input = digestInput(data, limits.maxDigestInput);
  if (input === null) return [false, 'invalid digest input'];
  const secret = key === null ? null : digestInput(key, limits.maxDigestInput);
  if (key !== null && secret === null) return [false, 'invalid HMAC key'];
  const bytes =
    secret === null
      ? hash(algorithm, input, 'buffer')
      : HMAC_BLOCKS.has(algorithm)
        ? hmac(algorithm, secret, input)
        : createHmac(algorithm, secret).update(input).digest();
  if (typeof encoding === 'string' && DIGEST_ENCODINGS.has(encoding)) return [true, bytes.toString(encoding as 'hex' | 'base64')];
  return [true, exactArrayBuffer(bytes)];
}

function digestInput(value: unknown, max: number): Uint8Array | null {
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return bytes.byteLength > max ? null : bytes;
  }
  return types.isUint8Array(value) && value.byteLength <= max ? value : null;
}

/**
 * HMAC (RFC 2104) over the one-shot hash: H((K ^ opad) || H((K ^ ipad) || data)), K zero-padded to the
 * hash's block (hashed first when longer). The same bytes as createHmac, at a fraction of its cost: OpenSSL 3
 * sets up an HMAC context per createHmac, where a one-shot hash sets up none (docs/benchmarks/history.md).
 */
export function hmac(algorithm: string, key: Uint8Array, data: Uint8Array): Buffer {
  const block = HMAC_BLOCKS.get(algorithm) ?? 64;
  const k = key.byteLength > block ? hash(algorithm, key, 'buffer') : key;
  const inner = Buffer.alloc(block + data.byteLength, 0x36);
  for (let i = 0; i < k.byteLength; i++) inner[i] ^= k[i]!;
  inner.set(data, block);
  const innerHash = hash(algorithm, inner, 'buffer');
  const outer = Buffer.alloc(block + innerHash.byteLength, 0x5c);
  for (let i = 0; i < k.byteLength; i++) outer[i] ^= k[i]!;
  outer.set(innerHash, block);
  return hash(algorithm, outer, 'buffer');
}

// Node Buffers may be views into a shared 8 KiB pool; copy exactly the bytes meant for the sandbox.
function exactArrayBuffer(buf: Buffer): ArrayBuffer {
  const out = new ArrayBuffer(buf.byteLength);
  new Uint8Array(out).set(buf);
  return out;
}

function parseUrl(input: unknown, base: unknown): HostAnswer {
  if (typeof input !== 'string' || input.length > MAX_URL_LENGTH) return [false, 'Invalid URL'];
  if (base !== undefined && (typeof base !== 'string' || base.length > MAX_URL_LENGTH)) return [false, 'Invalid base URL'];
  if (!URL.canParse(input, base)) return [false, 'Invalid URL'];
  return [true, urlRecord(new URL(input, base))];
}

function setUrlPart(href: unknown, part: unknown, value: unknown): HostAnswer {
  if (typeof href !== 'string' || typeof part !== 'string' || !URL_PARTS.has(part)) return [false, 'Invalid URL'];
  if (typeof value !== 'string' || value.length > MAX_URL_LENGTH) return [false, 'Invalid URL'];
  if (!URL.canParse(href)) return [false, 'Invalid URL'];
  const url = new URL(href);
  if (part === 'href') {
    if (!URL.canParse(value)) return [false, 'Invalid URL'];
    return [true, urlRecord(new URL(value))];
  }
  (url as unknown as Record<string, string>)[part] = value;
  return [true, urlRecord(url)];
}

function urlRecord(url: URL): Record<string, string> {
  return {
    href: url.href,
    origin: url.origin,
    protocol: url.protocol,
    username: url.username,
    password: url.password,
    host: url.host,
    hostname: url.hostname,
    port: url.port,
    pathname: url.pathname,
    search: url.search,
    hash: url.hash,
  };
}
