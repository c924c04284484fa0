import { AnchorHTMLAttributes, MouseEvent, useMemo, useSyncExternalStore } from 'react';

/**
 * The console's routing, without a router library: the path after /console/ names the page. `navigate` and `Link`
 * change it with the History API; Back and Forward (popstate) re-render every `useRoute` user.
 */
const BASE = import.meta.env.BASE_URL;
const listeners = new Set<() => void>();

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  window.addEventListener('popstate', listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('popstate', listener);
  };
}

const location = () => window.location.pathname + window.location.search;

/** The address of `to`, a path relative to the console's root (`'proxies/new'`, `'logs?entity_type=card'`). */
export function href(to: string): string {
  return BASE + to.replace(/^\/+/, '');
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = href(to);
  if (url === location()) return;
  if (options.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

export interface Route {
  /** The path after /console/, without a leading or trailing slash: `''`, `'logs'`, `'applications/<id>'`. */
  path: string;
  /** The query string, with its `?` (or `''`). */
  search: string;
}

export function useRoute(): Route {
  const current = useSyncExternalStore(subscribe, location);
  return useMemo(() => {
    const url = new URL(current, window.location.origin);
    const below = url.pathname.startsWith(BASE) ? url.pathname.slice(BASE.length) : '';
    return { path: below.replace(/^\/+|\/+$/g, ''), search: url.search };
  }, [current]);
}

/** A real link (a new tab, a copied address work) whose plain click stays in the page. */
export function Link({ to, onClick, ...rest }: { to: string } & Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'>) {
  function click(event: MouseEvent<HTMLAnchorElement>) {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  }
  return <a href={href(to)} onClick={click} {...rest} />;
}
