import type { Proxy } from '@gatehouse/domain';

export const MOUNT = '/proxy';
export const PROXY_KEY_PARAMETER = 'svc-proxy-key';

/** What `/proxy/<more path>?<query>` names (CONTRACT.md section 7). */
export interface Target {
  /** `<more path>` after /proxy, '' or starting with '/'. */
  path: string;
  /** The raw query string without svc-proxy-key, '' when none. */
  query: string;
  params: URLSearchParams;
}

/** `/proxy/<more path>?<query>` split apart, the proxy key taken out of the query. */
export function parseTarget(originalUrl: string): Target {
  const rest = originalUrl.slice(MOUNT.length);
  const q = rest.indexOf('?');
  const path = q === -1 ? rest : rest.slice(0, q);
  const rawQuery = q === -1 ? '' : rest.slice(q + 1);
  if (!rawQuery) return { path, query: '', params: new URLSearchParams() };
  // Filter the raw parts, so every other parameter reaches the destination byte for byte.
  const kept = rawQuery.split('&').filter((part) => {
    const name = part.split('=', 1)[0]!;
    try {
      return decodeURIComponent(name.replace(/\+/g, ' ')).toLowerCase() !== PROXY_KEY_PARAMETER;
    } catch {
      return true;
    }
  });
  return { path, query: kept.join('&'), params: new URLSearchParams(rawQuery) };
}

/** The query as a request transform sees it (`args.query`): repeated names as arrays, the proxy key left out. */
export function queryObject(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of params) {
    if (name.toLowerCase() === PROXY_KEY_PARAMETER) continue;
    const existing = out[name];
    if (existing === undefined) out[name] = value;
    else out[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return out;
}

/**
 * The destination's origin and base path, parsed once per Proxy object: the proxy cache hands every
 * request the same (frozen) object until the proxy changes.
 */
const destinations = new WeakMap<Proxy, { origin: string; basePath: string }>();
export function destinationOf(proxy: Proxy): { origin: string; basePath: string } {
  let destination = destinations.get(proxy);
  if (!destination) {
    const url = new URL(proxy.destinationUrl);
    destination = { origin: url.origin, basePath: url.pathname.replace(/\/$/, '') };
    destinations.set(proxy, destination);
  }
  return destination;
}
