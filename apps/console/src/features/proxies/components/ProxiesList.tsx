import { FormEvent, useState } from 'react';
import { Link } from '../../../app/router';
import { useMay } from '../../../app/SessionContext';
import { ErrorAlert } from '../../../components/ErrorAlert';
import { FilterActions, FilterInput } from '../../../components/Filters';
import { NewLink, Page } from '../../../components/Page';
import { TableHead } from '../../../components/TableHead';
import { useProxyList } from '../api/proxies';

/** The tenant's proxies, newest first, a page at a time (page and size, CONTRACT section 1), with a name filter. */
export function ProxiesList() {
  const may = useMay();
  const [page, setPage] = useState(1);
  const [name, setName] = useState('');
  const [filter, setFilter] = useState('');
  const canRead = may('proxy:read');
  const canCreate = may('proxy:create');
  const query = useProxyList(page, filter, canRead);
  const listing = query.data && {
    proxies: query.data.data,
    page: query.data.pagination.page_number ?? page,
    totalPages: query.data.pagination.total_pages ?? 1,
    totalItems: query.data.pagination.total_items ?? query.data.data.length,
  };
  const error = query.error?.message;

  function search(event: FormEvent) {
    event.preventDefault();
    setPage(1);
    setFilter(name.trim());
  }

  return (
    <Page title="Proxies" className="proxies" actions={canCreate && <NewLink to="proxies/new">New proxy</NewLink>}>
      {!canRead ? (
        <p>This key does not hold proxy:read, so it cannot list proxies.</p>
      ) : (
        <>
          <form className="filters" role="search" onSubmit={search}>
            <FilterInput id="proxy-name-filter" label="Name contains" value={name} onChange={(e) => setName(e.target.value)} placeholder="* matches anything" />
            <FilterActions submit="Search" />
          </form>
          <ErrorAlert message={error} />
          <table className="proxies-table">
            <caption className="visually-hidden">Proxies, newest first</caption>
            <TableHead columns={['Name', 'Destination', 'Needs an API key', 'Transforms', 'Created']} />
            <tbody>
              {listing?.proxies.map((p) => (
                <tr key={p.id}>
                  <td>
                    <Link to={`proxies/${p.id}`}>{p.name}</Link>
                  </td>
                  <td className="mono">{p.destination_url}</td>
                  <td>{p.require_auth ? 'Yes' : 'No'}</td>
                  <td>{[p.request_transform && 'request', p.response_transform && 'response'].filter(Boolean).join(', ') || 'none'}</td>
                  <td>{new Date(p.created_at).toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <nav className="pager" aria-label="Pages of proxies">
            <button type="button" className="secondary" disabled={page <= 1} onClick={() => setPage((p) => p - 1)}>
              Previous page
            </button>
            <span className="status" role="status" data-testid="proxies-status">
              {listing === undefined
                ? 'Loading…'
                : listing.totalItems === 0
                  ? filter
                    ? 'No proxy matches.'
                    : 'No proxies yet.'
                  : `Page ${listing.page} of ${Math.max(1, listing.totalPages)} (${listing.totalItems} proxies)`}
            </span>
            <button type="button" className="secondary" disabled={!listing || page >= listing.totalPages} onClick={() => setPage((p) => p + 1)}>
              Next page
            </button>
          </nav>
        </>
      )}
    </Page>
  );
}
