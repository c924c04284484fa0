import type { Api } from '../../../api/client';

// "Try the proxy": one request through /proxy/... on the API's origin, and the raw response.

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type Method = (typeof METHODS)[number];

export interface TryRequest {
  proxyKey: string;
  method: Method;
  /** The more path after /proxy/, e.g. `orders/1` (segments separated by `/`, each sent percent-encoded). */
  path: string;
  /** A query string without the leading `?`, e.g. `a=1&b=2`. */
  query: string;
  contentType: string;
  body: string;
  /** Send the signed-in key as SVC-API-KEY (what a proxy with require_auth needs). */
  sendApiKey: boolean;
}

export interface TryResult {
  status: number;
  statusText: string;
  headers: Array<[string, string]>;
  body: string;
  ms: number;
}

/**
 * The API's origin, which the page's <meta> names: `/proxy` serves tenants' bytes, so it is never on the console's
 * origin (docs/security.md, "Origins"); the API shares its responses with this origin alone (CORS). Under `vite dev`
 * (the placeholder left) this origin.
 */
function apiOrigin(): string {
  const named = document.querySelector<HTMLMetaElement>('meta[name="gatehouse-api-origin"]')?.content ?? '';
  return /^https?:\/\//.test(named) ? named : window.location.origin;
}

/**
 * Sends one request through /proxy/... on the API's origin with the proxy's key, through the signed-in client (so its
 * SVC-API-KEY goes along, or is taken off when `sendApiKey` is false), and reads the raw response whatever its type or
 * status.
 */
export async function tryProxy(api: Api, request: TryRequest): Promise<TryResult> {
  let raw: Response | undefined;
  const started = performance.now();
  const capture = async (req: Request): Promise<Response> => {
    const headers = new Headers(req.headers);
    if (!request.sendApiKey) headers.delete('SVC-API-KEY');
    // The more path exactly as typed: each segment encoded, the slashes kept (an encoded slash is a 400).
    const url = new URL(req.url);
    const api = new URL(apiOrigin());
    url.protocol = api.protocol;
    url.host = api.host;
    const more = request.path.replace(/^\/+/, '');
    url.pathname = more ? `/proxy/${more.split('/').map(encodeURIComponent).join('/')}` : '/proxy';
    url.search = request.query.replace(/^\?/, '');
    const hasBody = request.method !== 'GET' && request.body !== '';
    if (hasBody) headers.set('Content-Type', request.contentType || 'text/plain');
    const res = await fetch(url, { method: request.method, headers, body: hasBody ? request.body : undefined });
    raw = res.clone();
    return res;
  };
  await api.request(request.method.toLowerCase() as 'get', '/proxy', {
    headers: { 'SVC-PROXY-KEY': request.proxyKey },
    fetch: capture,
    parseAs: 'text',
  });
  const res = raw!;
  return {
    status: res.status,
    statusText: res.statusText,
    headers: [...res.headers.entries()],
    body: await res.text(),
    ms: Math.round(performance.now() - started),
  };
}
