import type { IncomingHttpHeaders } from 'node:http';

export type HeaderMap = Record<string, string | string[]>;

// RFC 9110 7.6.1 hop-by-hop headers, plus this service's own credentials and the host, never passed on.
const NEVER_FORWARDED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'svc-api-key', 'svc-proxy-key']);
// Recomputed for every body a transform produced.
const BODY_FRAMING = new Set(['content-length']);

export const DESTINATION_STATUS_HEADER = 'svc-proxy-destination-status';

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
  // `keep-alive` (what most clients send) names only a header that is never forwarded anyway.
  if (value === undefined || value === 'keep-alive' || value === 'Keep-Alive') return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  return new Set(
    text
      .split(',')
      .map((token) => token.trim().toLowerCase())
      .filter(Boolean),
  );
}

/**
 * A transform's headers as they leave (the reactor already held them to the transform contract): lower-cased, without
 * hop-by-hop ones, this service's credentials, the host, or content-length (recomputed for the body it produced).
 */
export function outgoingHeaders(headers: Record<string, string>): HeaderMap {
  const out: Record<string, string> = {};
  for (const name in headers) out[name.toLowerCase()] = headers[name]!;
  return forwardableHeaders(out, true);
}

/**
 * The headers a transform reads in `args.headers`: the names as the caller wrote them (the first spelling of each, from
 * the raw header lines), the values as Node joined them. Reading them is case-insensitive in the sandbox; what a
 * transform sends on is lower-cased again by outgoingHeaders.
 */
export function callerCasedHeaders(headers: HeaderMap, rawHeaders: readonly string[]): HeaderMap {
  const spelling = new Map<string, string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    const lower = name.toLowerCase();
    if (!spelling.has(lower)) spelling.set(lower, name);
  }
  const out: HeaderMap = {};
  for (const name in headers) out[spelling.get(name) ?? name] = headers[name]!;
  return out;
}
