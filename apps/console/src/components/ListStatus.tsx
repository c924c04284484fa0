import { ErrorAlert } from './ErrorAlert';

/** Where a list paged over the cursor stands, and what fetched the current page went wrong with. */
export interface Paging {
  loading: boolean;
  error?: string;
  /** The cursor of the next page; undefined at the end. */
  next?: string;
}

/**
 * The line under a list paged over the cursor (loading, empty, how many shown, whether more exist), a failed page's
 * message, and a *Load more* button while a next page exists.
 */
export function ListStatus({
  paging,
  count,
  testId,
  empty,
  shown,
  onMore,
  moreClassName,
}: {
  paging: Paging;
  count: number;
  testId: string;
  /** The line for an empty list. */
  empty: string;
  /** The line for `count` items shown, `more` when a next page exists. */
  shown: (count: number, more: boolean) => string;
  onMore: () => void;
  moreClassName?: string;
}) {
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
