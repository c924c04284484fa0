import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { types } from 'node:util';
import type { Invocation } from './invocation';

/** What the sandbox gets back from every host call: never a thrown host error (it would carry a host stack). */
export type HostAnswer = [true, unknown] | [false, string];

/** The invocation currently allowed to use a context's host function; null once it has ended. */
export interface ContextBinding {
  invocation: Invocation | null;
}

const HASHES = new Set(['md5', 'sha1', 'sha256', 'sha384', 'sha512']);
const URL_PARTS = new Set(['href', 'protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname', 'search', 'hash']);
const MAX_URL_LENGTH = 64 * 1024;

export interface HostFunctionLimits {
  maxDigestInput: number;
  maxRandomBytes: number;
}

/**
 * The single host function a sandbox context receives (as an isolated-vm Callback, captured only by
 * the runtime's closures). Work that needs Node — crypto, WHATWG URL parsing — runs here on
 * arguments isolated-vm has already copied out of the sandbox; anything else is refused.
 */
export function createHostFunction(binding: ContextBinding, limits: HostFunctionLimits) {
  return (op: unknown, a?: unknown, b?: unknown, c?: unknown): HostAnswer => {
    try {
      switch (op) {
        case 'log':
          binding.invocation?.log(a, b);
          return [true, undefined];
        case 'hash':
          return digest(a, null, b, limits);
        case 'hmac':
          return digest(a, b, c, limits);
        case 'randomBytes':
          if (typeof a !== 'number' || !Number.isInteger(a) || a < 0 || a > limits.maxRandomBytes) {
            return [false, 'randomBytes size is out of range'];
          }
          return [true, exactArrayBuffer(randomBytes(a))];
        case 'randomUUID':
          return [true, randomUUID()];
        case 'url':
          return parseUrl(a, b);
        case 'urlSet':
          return setUrlPart(a, b, c);
        case 'svc':
        case 'timer': {
          const invocation = binding.invocation;
          if (!invocation) return [false, 'the invocation has ended'];
          const problem = op === 'svc' ? invocation.startSvc(a, b) : invocation.startTimer(a, b);
          return problem === null ? [true, undefined] : [false, problem];
        }
        case 'clearTimer':
          binding.invocation?.clearTimer(a);
          return [true, undefined];
        default:
          return [false, 'unsupported operation'];
      }
    } catch {
      return [false, 'the operation failed'];
    }
  };
}

function digest(algorithm: unknown, key: unknown, data: unknown, limits: HostFunctionLimits): HostAnswer {
  if (typeof algorithm !== 'string' || !HASHES.has(algorithm)) return [false, 'Digest method not supported'];
  // isolated-vm may materialise copies in another realm (Jest runs code in a vm context): no instanceof.
  if (!types.isUint8Array(data) || data.byteLength > limits.maxDigestInput) return [false, 'invalid digest input'];
  if (key === null) return [true, exactArrayBuffer(createHash(algorithm).update(data).digest())];
  if (!types.isUint8Array(key) || key.byteLength > limits.maxDigestInput) return [false, 'invalid HMAC key'];
  return [true, exactArrayBuffer(createHmac(algorithm, key).update(data).digest())];
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
