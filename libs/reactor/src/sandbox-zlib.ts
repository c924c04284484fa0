import { types } from 'node:util';
import * as zlib from 'node:zlib';
import type { HostAnswer } from './sandbox-host-answer';

type ZlibMethod = 'deflate' | 'inflate' | 'deflateRaw' | 'inflateRaw' | 'gzip' | 'gunzip' | 'unzip' | 'brotliCompress' | 'brotliDecompress';

const SYNC: Record<ZlibMethod, (buf: Uint8Array, options: zlib.ZlibOptions & zlib.BrotliOptions) => Buffer> = {
  deflate: zlib.deflateSync,
  inflate: zlib.inflateSync,
  deflateRaw: zlib.deflateRawSync,
  inflateRaw: zlib.inflateRawSync,
  gzip: zlib.gzipSync,
  gunzip: zlib.gunzipSync,
  unzip: zlib.unzipSync,
  brotliCompress: zlib.brotliCompressSync,
  brotliDecompress: zlib.brotliDecompressSync,
};
const NUMERIC_OPTIONS = ['level', 'windowBits', 'memLevel', 'strategy', 'chunkSize', 'finishFlush', 'flush'] as const;

/**
 * One zlib call of a transform, run here (the sandbox process: its deadline and address-space cap apply) on bytes the
 * sandbox copied out. Input and output are bounded by the sandbox's buffer limit: a zip bomb stops at that many bytes
 * with an error (zlib's own maxOutputLength), whatever options it asks for.
 */
export function zlibCall(method: unknown, data: unknown, options: unknown, maxBytes: number): HostAnswer {
  if (typeof method !== 'string' || !Object.hasOwn(SYNC, method)) return [false, 'unsupported zlib method'];
  if (!types.isUint8Array(data)) return [false, 'invalid zlib input'];
  if (data.byteLength > maxBytes) return [false, `zlib input exceeds the sandbox limit of ${maxBytes} bytes`];
  const opts: Record<string, unknown> = { maxOutputLength: maxBytes };
  if (options !== null && typeof options === 'object') {
    const given = options as Record<string, unknown>;
    for (const key of NUMERIC_OPTIONS) if (typeof given[key] === 'number') opts[key] = given[key];
    if (types.isUint8Array(given.dictionary)) opts.dictionary = given.dictionary;
    if (given.params !== null && typeof given.params === 'object') {
      const params: Record<number, number> = {};
      for (const [k, v] of Object.entries(given.params as Record<string, unknown>)) if (typeof v === 'number') params[Number(k)] = v;
      opts.params = params;
    }
  }
  try {
    const out = SYNC[method as ZlibMethod](data, opts);
    const copy = new ArrayBuffer(out.byteLength);
    new Uint8Array(copy).set(out);
    return [true, copy];
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_BUFFER_TOO_LARGE') return [false, `zlib output exceeds the sandbox limit of ${maxBytes} bytes`];
    return [false, error instanceof Error ? error.message : 'zlib failed'];
  }
}

const CONSTANTS_JSON = JSON.stringify(zlib.constants);

export function zlibConstants(): HostAnswer {
  return [true, CONSTANTS_JSON];
}

export function crc32(data: unknown, value: unknown): HostAnswer {
  if (!types.isUint8Array(data) || typeof value !== 'number') return [false, 'invalid crc32 input'];
  return [true, zlib.crc32(data, value)];
}
