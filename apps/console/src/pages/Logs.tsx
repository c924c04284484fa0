import { FormEvent, useCallback, useEffect, useRef, useState } from 'react';
import { Api, EntityType, ExportQuery, Log, LogQuery, problemText } from '../api/client';
import { ListStatus, Paging } from '../components/ListStatus';
import { Page } from '../components/Page';
import { TableHead } from '../components/TableHead';
import { navigate } from '../components/router';
import { isoToLocalInput, localInputToIso, TIME_ZONE, timeFormat } from '../format';
import { Checkpoint, Verification, verifyTrail } from '../verify';

const PAGE_SIZE = 50;

/** The filters a deep link carries: the query string of /console/logs, in the API's own parameter names. */
interface Filters {
  entity_type: string;
  entity_id: string;
  actor_id: string;
  /** ISO instants (UTC) in the URL, so a link means the same moment in every time zone. */
  start_date: string;
  end_date: string;
}

const FILTER_NAMES: Array<keyof Filters> = ['entity_type', 'entity_id', 'actor_id', 'start_date', 'end_date'];

function filtersFromUrl(): Filters {
  const params = new URLSearchParams(window.location.search);
  const filters = {} as Filters;
  for (const name of FILTER_NAMES) filters[name] = params.get(name) ?? '';
  return filters;
}

function filtersToSearch(filters: Filters): string {
  const params = new URLSearchParams();
  for (const name of FILTER_NAMES) if (filters[name]) params.set(name, filters[name]);
  const search = params.toString();
  return search ? `?${search}` : '';
}

function toQuery(filters: Filters, start?: string): LogQuery {
  const query: Record<string, string | number> = { size: PAGE_SIZE };
  for (const name of FILTER_NAMES) if (filters[name]) query[name] = filters[name];
  if (start) query.start = start;
  return query as LogQuery;
}


interface Listing extends Paging {
  logs: Log[];
}

export function LogsPage({ api }: { api: Api }) {
  const [filters, setFilters] = useState<Filters>(filtersFromUrl);
  const [listing, setListing] = useState<Listing>({ logs: [], loading: true });
  const [selected, setSelected] = useState<Log | null>(null);
  const [entityTypes, setEntityTypes] = useState<EntityType[]>([]);
  // Answers to an older filter arrive late sometimes: only the current generation may write the listing.
  const generation = useRef(0);
  const loadingRef = useRef(false);

  useEffect(() => {
    let live = true;
    void api.GET('/logs/entity-types').then(({ data }) => {
      if (live && data) setEntityTypes(data);
    });
    return () => {
      live = false;
    };
  }, [api]);

  useEffect(() => {
    const onPop = () => setFilters(filtersFromUrl());
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);

  const load = useCallback(
    async (current: Filters, start: string | undefined, gen: number) => {
      loadingRef.current = true;
      setListing((l) => ({ ...l, loading: true, error: undefined }));
      try {
        const { data, error, response } = await api.GET('/logs', { params: { query: toQuery(current, start) } });
        if (gen !== generation.current) return;
        if (!data) {
          setListing((l) => ({ ...l, loading: false, next: undefined, error: problemText(error, response) }));
          return;
        }
        const page = data as { data?: Log[]; pagination?: { next?: string } };
        setListing((l) => ({
          logs: start ? [...l.logs, ...(page.data ?? [])] : (page.data ?? []),
          next: page.pagination?.next,
          loading: false,
        }));
      } catch {
        if (gen === generation.current) setListing((l) => ({ ...l, loading: false, error: 'The service could not be reached.' }));
      } finally {
        if (gen === generation.current) loadingRef.current = false;
      }
    },
    [api],
  );

  useEffect(() => {
    const gen = ++generation.current;
    setListing({ logs: [], loading: true });
    setSelected(null);
    void load(filters, undefined, gen);
  }, [filters, load]);

  const loadMore = useCallback(() => {
    if (loadingRef.current || !listing.next || listing.error) return;
    void load(filters, listing.next, generation.current);
  }, [filters, listing.next, listing.error, load]);

  // Infinite scrolling: the next page loads when the end of the table comes into view.
  const sentinel = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const node = sentinel.current;
    if (!node) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) loadMore();
    });
    observer.observe(node);
    return () => observer.disconnect();
  }, [loadMore]);

  function apply(next: Filters) {
    navigate(`logs${filtersToSearch(next)}`);
    setFilters(next);
  }

  return (
    <Page title="Audit logs" className="logs">
      <FilterForm key={filtersToSearch(filters)} initial={filters} entityTypes={entityTypes} onApply={apply} />
      <div className="toolbar">
        <ExportButtons api={api} filters={filters} />
        <Integrity api={api} />
      </div>
      <div className="logs-body">
        <section className="table-wrap" aria-label="Logs, newest first">
          <table>
            <caption className="visually-hidden">Audit logs, newest first</caption>
            <TableHead columns={[`Time (${TIME_ZONE})`, 'Entity type', 'Entity id', 'Operation', 'Actor', 'Message']} />
            <tbody>
              {listing.logs.map((log) => (
                <tr key={log.id} className={selected?.id === log.id ? 'selected' : undefined} data-log-id={log.id}>
                  <td>
                    <button type="button" className="link" onClick={() => setSelected(log)}>
                      {timeFormat.format(new Date(log.created_at))}
                    </button>
                  </td>
                  <td>{log.entity_type}</td>
                  <td className="mono">{log.entity_id}</td>
                  <td>{log.operation}</td>
                  <td className="mono">{log.actor_id ?? log.actor_type ?? ''}</td>
                  <td>{log.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <div ref={sentinel} className="sentinel" />
          <ListStatus
            paging={listing}
            count={listing.logs.length}
            testId="logs-status"
            empty="No logs match these filters."
            shown={(n, more) => (more ? `${n} logs shown; scroll for more.` : `${n} logs shown: the end of the list.`)}
            onMore={loadMore}
          />
        </section>
        {selected && <LogDetail log={selected} onClose={() => setSelected(null)} />}
      </div>
    </Page>
  );
}

function FilterForm({ initial, entityTypes, onApply }: { initial: Filters; entityTypes: EntityType[]; onApply: (f: Filters) => void }) {
  const [draft, setDraft] = useState({ ...initial, start_date: isoToLocalInput(initial.start_date), end_date: isoToLocalInput(initial.end_date) });
  const set = (name: keyof Filters) => (e: { target: { value: string } }) => setDraft((d) => ({ ...d, [name]: e.target.value }));

  function submit(event: FormEvent) {
    event.preventDefault();
    onApply({
      entity_type: draft.entity_type,
      entity_id: draft.entity_id.trim(),
      actor_id: draft.actor_id.trim(),
      start_date: localInputToIso(draft.start_date),
      end_date: localInputToIso(draft.end_date),
    });
  }

  function clear() {
    onApply({ entity_type: '', entity_id: '', actor_id: '', start_date: '', end_date: '' });
  }

  return (
    <form className="filters" onSubmit={submit} aria-label="Filters">
      <div className="field">
        <label htmlFor="f-entity-type">Entity type</label>
        <select id="f-entity-type" value={draft.entity_type} onChange={set('entity_type')}>
          <option value="">Any</option>
          {entityTypes.map((t) => (
            <option key={t.value} value={t.value}>
              {t.display_name}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="f-entity-id">Entity id</label>
        <input id="f-entity-id" value={draft.entity_id} onChange={set('entity_id')} />
      </div>
      <div className="field">
        <label htmlFor="f-actor">Actor id</label>
        <input id="f-actor" value={draft.actor_id} onChange={set('actor_id')} spellCheck={false} />
      </div>
      <div className="field">
        <label htmlFor="f-from">From ({TIME_ZONE})</label>
        <input id="f-from" type="datetime-local" value={draft.start_date} onChange={set('start_date')} />
      </div>
      <div className="field">
        <label htmlFor="f-to">Until, exclusive ({TIME_ZONE})</label>
        <input id="f-to" type="datetime-local" value={draft.end_date} onChange={set('end_date')} />
      </div>
      <div className="actions">
        <button type="submit">Apply filters</button>
        <button type="button" className="secondary" onClick={clear}>
          Clear
        </button>
      </div>
    </form>
  );
}

function LogDetail({ log, onClose }: { log: Log; onClose: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [log.id]);
  const rows: Array<[string, string | number | undefined]> = [
    ['Id', log.id],
    ['Time (UTC)', log.created_at],
    [`Time (${TIME_ZONE})`, timeFormat.format(new Date(log.created_at))],
    ['Entity type', log.entity_type],
    ['Entity id', log.entity_id],
    ['Operation', log.operation],
    ['Actor type', log.actor_type],
    ['Actor id', log.actor_id],
    ['Message', log.message],
    ['Request id', log.request_id],
    ['Source address', log.source_ip],
    ['User agent', log.user_agent],
    ['Chain position', log.position],
    ['Chain hash', log.hash],
  ];
  return (
    <aside className="detail" aria-labelledby="detail-title">
      <h2 id="detail-title" tabIndex={-1} ref={heading}>
        Log {log.position}
      </h2>
      <dl>
        {rows
          .filter(([, v]) => v !== undefined && v !== '')
          .map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd className="mono">{String(v)}</dd>
            </div>
          ))}
      </dl>
      <button type="button" onClick={onClose}>
        Close details
      </button>
    </aside>
  );
}

/** Saves `text` as a file through a temporary object URL: the export needs the key header, so no plain link can fetch it. */
function saveText(text: string, type: string, name: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

function ExportButtons({ api, filters }: { api: Api; filters: Filters }) {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string>();

  async function download(format: 'ndjson' | 'csv') {
    setBusy(format);
    setError(undefined);
    try {
      const query: Record<string, string> = { format };
      for (const name of FILTER_NAMES) if (filters[name]) query[name] = filters[name];
      const { data, error: problem, response } = await api.GET('/logs/export', {
        params: { query: query as ExportQuery },
        parseAs: 'text',
      });
      if (typeof data !== 'string') setError(problemText(problem, response));
      else {
        const stamp = new Date().toISOString().replace(/[:.]/g, '-');
        saveText(data, format === 'csv' ? 'text/csv' : 'application/x-ndjson', `gatehouse-logs-${stamp}.${format}`);
      }
    } catch {
      setError('The service could not be reached.');
    } finally {
      setBusy(null);
    }
  }

  return (
    <section className="export" aria-label="Export">
      <span>Export the current filter:</span>
      <button type="button" className="secondary" disabled={busy !== null} onClick={() => void download('ndjson')}>
        {busy === 'ndjson' ? 'Exporting…' : 'NDJSON'}
      </button>
      <button type="button" className="secondary" disabled={busy !== null} onClick={() => void download('csv')}>
        {busy === 'csv' ? 'Exporting…' : 'CSV'}
      </button>
      {error && (
        <span className="error" role="alert">
          {error}
        </span>
      )}
    </section>
  );
}

function Integrity({ api }: { api: Api }) {
  const [latest, setLatest] = useState<Checkpoint | null | undefined>(undefined);
  const [result, setResult] = useState<Verification | { running: true }>();

  useEffect(() => {
    let live = true;
    void api.GET('/logs/checkpoints', { params: { query: { size: 1 } } }).then(({ data }) => {
      const page = data as { data?: Checkpoint[] } | undefined;
      if (live) setLatest(page?.data?.[0] ?? null);
    });
    return () => {
      live = false;
    };
  }, [api]);

  async function verify() {
    setResult({ running: true });
    try {
      const checkpoints: Checkpoint[] = [];
      let start: string | undefined;
      do {
        const { data } = await api.GET('/logs/checkpoints', { params: { query: { size: 100, ...(start ? { start } : {}) } } });
        const page = data as { data?: Checkpoint[]; pagination?: { next?: string } } | undefined;
        if (!page?.data) throw new Error('checkpoints');
        checkpoints.push(...page.data);
        start = page.pagination?.next;
      } while (start);
      const key = await api.GET('/logs/public-key');
      const trail = await api.GET('/logs/export', { params: { query: { format: 'ndjson' } }, parseAs: 'text' });
      if (!key.data || typeof trail.data !== 'string') throw new Error('download');
      setLatest(checkpoints[0] ?? null);
      setResult(await verifyTrail(trail.data, checkpoints, key.data.public_key));
    } catch (e) {
      setResult({ ok: false, problem: `Verification could not run: ${e instanceof Error ? e.message : String(e)} did not load.` });
    }
  }

  return (
    <section className="integrity" aria-labelledby="integrity-title">
      <h2 id="integrity-title">Integrity</h2>
      <p data-testid="last-checkpoint">
        {latest === undefined
          ? 'Loading the last signed checkpoint…'
          : latest === null
            ? 'No signed checkpoint yet.'
            : `Last signed checkpoint: position ${latest.position}, signed ${timeFormat.format(new Date(latest.signed_at))} (${TIME_ZONE}), key ${latest.key_id}.`}
      </p>
      <button type="button" className="secondary" onClick={() => void verify()} disabled={result !== undefined && 'running' in result}>
        Verify the trail
      </button>
      <p role="status" data-testid="verification">
        {result === undefined
          ? ''
          : 'running' in result
            ? 'Verifying…'
            : result.ok
              ? `Verified: ${result.logs} logs chained without a gap, ${result.checkpoints} checkpoint signatures valid, signed up to position ${result.lastSigned}${result.unsigned ? ` (${result.unsigned} newer logs not signed yet)` : ''}. Checked against the key this service serves; for an independent check, run gatehouse logs verify with a key obtained out of band.`
              : `Verification failed: ${result.problem}`}
      </p>
    </section>
  );
}
