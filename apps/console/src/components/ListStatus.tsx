import { ReactNode } from 'react';
import { ErrorAlert } from './ErrorAlert';
import { TableHead } from './TableHead';

/** Where a list paged over the cursor stands, and what fetched the current page went wrong with. */
export interface Paging {
  loading: boolean;
  error?: string;
  /** The cursor of the next page; undefined at the end. */
  next?: string;
}

interface ListStatusProps {
  paging: Paging;
  count: number;
  testId: string;
  /** The line for an empty list. */
  empty: string;
  /** The line for `count` items shown, `more` when a next page exists. */
  shown: (count: number, more: boolean) => string;
  onMore: () => void;
  moreClassName?: string;
}

/**
 * The line under a list paged over the cursor (loading, empty, how many shown, whether more exist), a failed page's
 * message, and a *Load more* button while a next page exists.
 */
export function ListStatus({ paging, count, testId, empty, shown, onMore, moreClassName }: ListStatusProps) {
  const { loading, error, next } = paging;
  return (
    <>
      <p className="status" role="status" data-testid={testId}>
        {error ? '' : loading ? 'Loading…' : count === 0 ? empty : shown(count, next !== undefined)}
      </p>
      <ErrorAlert message={error} />
      {next && !loading && !error && (
        <button type="button" className={moreClassName} onClick={onMore}>
          Load more
        </button>
      )}
    </>
  );
}

/** A list paged over the cursor as `usePagedList` gives it: the items so far, the paging, and `loadMore`. */
export interface PagedItems<T> {
  items: T[];
  paging: Paging;
  loadMore: () => void;
}

/**
 * A table of a list paged over the cursor (a visually hidden caption, a header row, a row an item as `row` draws it)
 * and its `ListStatus` under it; `children` stand between the two (an infinite scroll's sentinel).
 */
export function PagedTable<T>({
  list,
  caption,
  columns,
  row,
  children,
  ...status
}: Omit<ListStatusProps, 'paging' | 'count' | 'onMore'> & {
  list: PagedItems<T>;
  caption: string;
  columns: string[];
  row: (item: T) => ReactNode;
  children?: ReactNode;
}) {
  const { items, paging, loadMore } = list;
  return (
    <>
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <TableHead columns={columns} />
        <tbody>{items.map(row)}</tbody>
      </table>
      {children}
      <ListStatus {...status} paging={paging} count={items.length} onMore={loadMore} />
    </>
  );
}
