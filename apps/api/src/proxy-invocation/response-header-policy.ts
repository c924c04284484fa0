import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/**
 * What every `/proxy` response may tell a browser, whoever wrote its headers (a destination, a response transform,
 * this service's own error bodies). A proxy's response is a tenant's bytes served on the API's origin: an API client
 * reads them, a browser must never run them as that origin, nor let them change how it treats that origin later.
 * docs/security.md ("Origins") gives the reasons for each header.
 */

/**
 * The policy every `/proxy` response carries: a sandboxed document with an opaque origin (no script, no form, no
 * storage, no service worker of this origin), loading nothing, framed by nobody. API clients ignore it.
 */
export const PROXY_RESPONSE_CSP = "sandbox; default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Headers that only ever act on a browser's view of the origin that sends them: never from a destination. */
export const DROPPED_RESPONSE_HEADERS: readonly string[] = [
  // A service worker of this origin with a scope wider than /proxy/ (issue 22: `/` took every later request).
  'service-worker-allowed',
  // Clears this origin's storage, cookies or open documents in the browser.
  'clear-site-data',
  // A browser-only navigation (a 3xx Location stays: API clients follow redirects themselves).
  'refresh',
  // Transport rules for this host and its subdomains: the operator's choice, never a tenant's.
  'strict-transport-security',
  'alt-svc',
  // Reporting endpoints: every later request to this origin (URLs with proxy keys in their query) reported elsewhere.
  'nel',
  'report-to',
  'reporting-endpoints',
  // Browser features an origin opts into: prerendering, speculation rules, the FedCM login status.
  'speculation-rules',
  'supports-loading-mode',
  'set-login',
];

const DROPPED = new Set(DROPPED_RESPONSE_HEADERS);

/** Link relations a browser acts on by itself (fetches, connects, installs); `next`, `last`... (paging) stay. */
const BROWSER_LINK_RELATIONS = new Set([
  'preload',
  'modulepreload',
  'prefetch',
  'prerender',
  'preconnect',
  'dns-prefetch',
  'serviceworker',
  'stylesheet',
  'icon',
  'manifest',
]);

/**
 * Applies the policy to `res` at the moment its head is written (Node calls writeHead for every response, an implicit
 * head included), so headers set at any point before, by anyone, are covered. `corsOrigin`: the one origin this
 * response is shared with (the console's, for its "Try the proxy"), whatever CORS headers the destination sent.
 */
export function applyProxyResponseHeaderPolicy(res: ServerResponse, corsOrigin?: string): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, statusCode: number, ...rest: unknown[]) {
    // writeHead(status, [message], [headers]): headers given here are merged first, so they are covered too.
    const last = rest[rest.length - 1];
    if (last !== undefined && typeof last !== 'string') {
      rest.pop();
      mergeHeaders(this, last as OutgoingHttpHeaders | unknown[]);
    }
    enforce(this, corsOrigin);
    return (writeHead as (...args: unknown[]) => ServerResponse).call(this, statusCode, ...rest);
  } as ServerResponse['writeHead'];
}

/** The policy on the headers `res` holds now. */
export function enforce(res: ServerResponse, corsOrigin?: string): void {
  // The names set (a handful), not every dropped name: removeHeader validates and lower-cases each it is given.
  for (const name of res.getHeaderNames()) if (DROPPED.has(name)) res.removeHeader(name);
  filterValues(res, 'set-cookie', (cookie) => !widelyScopedCookie(cookie));
  filterValues(res, 'link', (value) =>
    splitLinks(value)
      .filter((link) => !browserLink(link))
      .join(', '),
  );
  res.setHeader('x-content-type-options', 'nosniff');
  // A destination's own policy stays (a browser enforces every policy it is given); ours is added to it.
  const existing = res.getHeader('content-security-policy');
  const own = existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)];
  res.setHeader('content-security-policy', [...own, PROXY_RESPONSE_CSP]);
  if (corsOrigin !== undefined) {
    res.removeHeader('access-control-allow-credentials');
    res.setHeader('access-control-allow-origin', corsOrigin);
    if (!res.hasHeader('access-control-allow-methods')) res.setHeader('access-control-expose-headers', '*');
    const vary = res.getHeader('vary');
    if (!/(^|,)\s*(origin|\*)\s*(,|$)/i.test(String(vary ?? ''))) res.setHeader('vary', vary === undefined ? 'Origin' : `${String(vary)}, Origin`);
  }
}

/**
 * A cookie with a Domain attribute: meant for a parent domain of this host (every sibling host of the deployment)
 * or for the destination's own domain, which a client of this origin rejects anyway. Host-only cookies stay.
 */
export function widelyScopedCookie(cookie: string): boolean {
  return cookie
    .split(';')
    .slice(1)
    .some((attribute) => attribute.split('=', 1)[0]!.trim().toLowerCase() === 'domain');
}

/** Link header values (RFC 8288), split at the commas between them (not inside <...> or quoted strings). */
export function splitLinks(value: string): string[] {
  const links: string[] = [];
  let start = 0;
  let inUri = false;
  let inQuote = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (inQuote) {
      if (c === '\\') i++;
      else if (c === '"') inQuote = false;
    } else if (c === '"') inQuote = true;
    else if (c === '<') inUri = true;
    else if (c === '>') inUri = false;
    else if (c === ',' && !inUri) {
      links.push(value.slice(start, i).trim());
      start = i + 1;
    }
  }
  links.push(value.slice(start).trim());
  return links.filter((link) => link !== '');
}

/** A link whose relation types include one a browser acts on (any spelling of rel, quoted or not). */
function browserLink(link: string): boolean {
  const params = link.slice(link.indexOf('>') + 1);
  const pattern = /;\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]+))/gi;
  for (let match = pattern.exec(params); match; match = pattern.exec(params)) {
    const types = (match[1] ?? match[2] ?? '').toLowerCase().split(/\s+/);
    if (types.some((type) => BROWSER_LINK_RELATIONS.has(type))) return true;
  }
  return false;
}

/** Keeps, for each value of header `name`, what `keep` answers: a value, or false/'' to drop it. */
function filterValues(res: ServerResponse, name: string, keep: (value: string) => string | boolean): void {
  const current = res.getHeader(name);
  if (current === undefined) return;
  const values = (Array.isArray(current) ? current : [String(current)]).flatMap((value) => {
    const kept = keep(value);
    return kept === true ? [value] : kept ? [kept] : [];
  });
  if (values.length === 0) res.removeHeader(name);
  else res.setHeader(name, name === 'set-cookie' ? values : values.join(', '));
}

function mergeHeaders(res: ServerResponse, headers: OutgoingHttpHeaders | unknown[]): void {
  if (Array.isArray(headers)) {
    // A flat [name, value, name, value...] list.
    for (let i = 0; i + 1 < headers.length; i += 2) res.appendHeader(String(headers[i]), headers[i + 1] as string);
    return;
  }
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) res.setHeader(name, value);
}
