import { FormEvent, useMemo, useState } from 'react';
import { usePagedList } from '../../../api/paging';
import { Link, navigate, useRoute } from '../../../app/router';
import { useSession } from '../../../app/SessionContext';
import { FilterActions, FilterInput, FilterSelect } from '../../../components/Filters';
import { PagedTable } from '../../../components/ListStatus';
import { NewLink, Page } from '../../../components/Page';
import { formatTime, TIME_ZONE } from '../../../format';
import {
  filtersFromSearch,
  filtersToSearch,
  holdsTokenPermission,
  metadataText,
  NO_FILTERS,
  TokenFilters,
  TOKEN_TYPES,
  typeLabel,
  useTokenSearch,
} from '../api/tokens';
import { TokenDetail } from './TokenDetail';
import { TokenForm } from './TokenForm';

/** /console/tokens (search), /console/tokens/new (create) and /console/tokens/<id> (a token as this key may see it). */
export function TokensPage({ path }: { path: string }) {
  const { application, probed } = useSession();
  const rest = pathSegment(path.replace(/^\/+|\/+$/g, ''));
  // A key that may not read its own application: which token permissions it holds beyond token:read is unknown
  // (creating or deleting cannot be probed without doing it), so the actions are offered and the API decides.
  const may = (permission: string) => probed || holdsTokenPermission(application, permission);
  if (rest === '') return <TokenSearch canCreate={may('token:create')} />;
  if (rest === 'new') return <TokenForm />;
  return <TokenDetail key={rest} id={rest} canDelete={may('token:delete')} />;
}

/** A token id from the address (ids may hold only A-Z a-z 0-9 _ -, but an address may hold anything). */
function pathSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** The search form, and the tokens it finds, *Load more* following the cursor. */
function TokenSearch({ canCreate }: { canCreate: boolean }) {
  const { search } = useRoute();
  // The address is the search (a deep link, Back and Forward): the filters are read from it, never kept apart.
  const filters = useMemo(() => filtersFromSearch(search), [search]);

  function apply(next: TokenFilters) {
    navigate(`tokens${filtersToSearch(next)}`);
  }

  return (
    <Page title="Tokens" className="tokens" actions={canCreate && <NewLink to="tokens/new">New token</NewLink>}>
      <TokenFilterForm key={filtersToSearch(filters)} initial={filters} onApply={apply} />
      <section className="table-wrap" aria-label="Tokens, newest first">
        <PagedTable
          list={usePagedList(useTokenSearch(filters))}
          caption="Tokens, newest first"
          columns={['Id', 'Type', 'Containers', 'Metadata', `Created (${TIME_ZONE})`, 'Expires']}
          row={(token) => (
            <tr key={token.id} data-token-id={token.id}>
              <td className="mono">
                <Link to={`tokens/${encodeURIComponent(token.id)}`}>{token.id}</Link>
              </td>
              <td>{typeLabel(token.type)}</td>
              <td className="mono">{token.containers.join(' ')}</td>
              <td className="mono">{metadataText(token.metadata)}</td>
              <td>{formatTime(token.created_at)}</td>
              <td>{formatTime(token.expires_at, 'never')}</td>
            </tr>
          )}
          testId="tokens-status"
          empty="No token this key may read matches this search."
          shown={(n, more) => (more ? `${n} tokens shown; more exist.` : `${n} tokens shown: the end of the list.`)}
          moreClassName="secondary"
        />
      </section>
    </Page>
  );
}

function TokenFilterForm({ initial, onApply }: { initial: TokenFilters; onApply: (f: TokenFilters) => void }) {
  const [draft, setDraft] = useState(initial);
  const set = (name: keyof TokenFilters) => (e: { target: { value: string } }) => setDraft((d) => ({ ...d, [name]: e.target.value }));

  function submit(event: FormEvent) {
    event.preventDefault();
    const trimmed = { ...draft, container: draft.container.trim(), fingerprint: draft.fingerprint.trim(), metadata_key: draft.metadata_key.trim() };
    onApply(trimmed.metadata_key ? trimmed : { ...trimmed, metadata_value: '' });
  }

  return (
    <form className="filters" role="search" aria-label="Search tokens" onSubmit={submit}>
      <FilterInput id="t-container" label="Container starts with" value={draft.container} onChange={set('container')} placeholder="/pci/" spellCheck={false} />
      <FilterSelect id="t-type" label="Type" value={draft.type} onChange={set('type')} options={TOKEN_TYPES} />
      <FilterInput id="t-fingerprint" label="Fingerprint" value={draft.fingerprint} onChange={set('fingerprint')} spellCheck={false} />
      <FilterInput id="t-meta-key" label="Metadata key" value={draft.metadata_key} onChange={set('metadata_key')} spellCheck={false} />
      <FilterInput id="t-meta-value" label="Metadata value" value={draft.metadata_value} onChange={set('metadata_value')} spellCheck={false} />
      <FilterActions submit="Search" onClear={() => onApply(NO_FILTERS)} />
    </form>
  );
}
