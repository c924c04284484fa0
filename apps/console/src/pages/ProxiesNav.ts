/**
 * Navigation inside the console without a reload: the URL changes (pushState) and a popstate event tells whoever
 * renders the route (the shell) to render the new one.
 */
export function navigate(path: string, options: { replace?: boolean } = {}): void {
  const url = `${import.meta.env.BASE_URL}${path.replace(/^\/+/, '')}`;
  if (options.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

/** A same-tab click on a console link goes through `navigate`; a modified click (new tab) is the browser's. */
export function followLink(event: React.MouseEvent<HTMLAnchorElement>, path: string): void {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(path);
}

export const href = (path: string) => `${import.meta.env.BASE_URL}${path.replace(/^\/+/, '')}`;
