import type { IncomingHttpHeaders } from 'node:http';

export type HeaderMap = Record<string, string | string[]>;

// RFC 9110 7.6.1 hop-by-hop headers, plus this service's own credentials and the host, never passed on.
const NEVER_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'host',
  'svc-api-key',
  'svc-proxy-key',
]);
// Recomputed for every body a transform produced.
const BODY_FRAMING = new Set(['content-length']);

export const DESTINATION_STATUS_HEADER = 'svc-proxy-destination-status';

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * The headers of a message without hop-by-hop ones (those fixed above, `proxy-*`, and any the Connection
 * header names), this service's credentials and the host. `dropFraming` also drops content-length, for a
 * body that is re-serialised.
 */
export function forwardableHeaders(headers: IncomingHttpHeaders | HeaderMap, dropFraming = false): HeaderMap {
  const named = connectionTokens(headers.connection);
  const out: HeaderMap = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (NEVER_FORWARDED.has(lower) || lower.startsWith('proxy-') || named?.has(lower)) continue;
    if (dropFraming && BODY_FRAMING.has(lower)) continue;
    out[lower] = value;
  }
  return out;
}

function connectionTokens(value: string | string[] | undefined): Set<string> | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  return new Set(text.split(',').map((token) => token.trim().toLowerCase()).filter(Boolean));
}

/** A transform's headers as the wire needs them: string values, valid names, no CR/LF; throws on anything else. */
export function transformHeaders(headers: unknown, direction: 'request' | 'response'): HeaderMap {
  if (headers == null) return {};
  if (typeof headers !== 'object' || Array.isArray(headers)) {
    throw new InvalidTransformResultError(`The ${direction} transform returned headers that are not an object`);
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    if (value === undefined || value === null) continue;
    const text = typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
    if (!TOKEN.test(name) || text === undefined || !FIELD_VALUE.test(text)) {
      throw new InvalidTransformResultError(`The ${direction} transform returned an invalid header '${name.slice(0, 100)}'`);
    }
    out[name.toLowerCase()] = text;
  }
  return forwardableHeaders(out, true);
}

/** Transform output the proxy cannot send (bad headers, status); answered as a ReactorRuntimeError. */
export class InvalidTransformResultError extends Error {}
