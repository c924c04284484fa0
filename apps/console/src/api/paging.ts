import { InfiniteData, UseInfiniteQueryResult } from '@tanstack/react-query';
import { useCallback } from 'react';
import type { PagedItems, Paging } from '../components/ListStatus';

/** One page of a list read over the keyset cursor: its items, and `next` while a further page exists. */
export interface CursorPage<T> {
  data: T[];
  pagination: { next?: string };
}

/** What `useInfiniteQuery` takes for a list over the keyset cursor: `pagination.next` into `start`. */
export const cursorPaging = {
  initialPageParam: undefined as string | undefined,
  getNextPageParam: (page: CursorPage<unknown>) => page.pagination.next,
};

/**
 * A list read over the cursor, a page at a time, as the pages show it: the items so far, where the paging stands
 * (loading, the failed page's message, the next cursor), and `loadMore`, which does nothing while a page loads,
 * after a failure, or at the end.
 */
export function usePagedList<T>(query: UseInfiniteQueryResult<InfiniteData<CursorPage<T>, unknown>, Error>): PagedItems<T> {
  const { data, isFetching, isError, hasNextPage, fetchNextPage, error } = query;
  const pages = data?.pages ?? [];
  const next = hasNextPage ? pages[pages.length - 1]?.pagination.next : undefined;
  const paging: Paging = { loading: isFetching, error: error?.message, next };
  // A new function when what it would do changes (an infinite scroll observes again then).
  const loadMore = useCallback(() => {
    if (!isFetching && !isError && next !== undefined) void fetchNextPage();
  }, [isFetching, isError, next, fetchNextPage]);
  return { items: pages.flatMap((p) => p.data), paging, loadMore };
}
