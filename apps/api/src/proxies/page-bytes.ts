import { encodeCursor, Page } from '@gatehouse/domain';

/**
 * The most one list page of proxies may carry (their JSON, UTF-8). A proxy is up to about 0.4 MB (two transforms of
 * 50,000 characters, 64 KiB of configuration), so 100 of them could make a page of tens of MB, built in one piece on
 * the event loop while every other request waits.
 */
export const MAX_PAGE_BYTES = 4 * 1024 * 1024;

/**
 * The page cut short where its items would pass `maxBytes` (never before its first item), with `next` naming the
 * first item left out: a client that follows `next` misses nothing. `body` is each item as the response carries it.
 */
export function pageWithinBytes<T extends { createdAt: Date; id: string }, R>(
  page: Page<T>,
  body: (item: T) => R,
  maxBytes = MAX_PAGE_BYTES,
): { page: Page<T>; bodies: R[] } {
  const bodies: R[] = [];
  let bytes = 0;
  for (const item of page.items) {
    const response = body(item);
    bytes += Buffer.byteLength(JSON.stringify(response));
    if (bytes > maxBytes && bodies.length > 0) {
      const kept = page.items.slice(0, bodies.length);
      return { page: { ...page, items: kept, next: encodeCursor(kept[kept.length - 1]!) }, bodies };
    }
    bodies.push(response);
  }
  return { page, bodies };
}
