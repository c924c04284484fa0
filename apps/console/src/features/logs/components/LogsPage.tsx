import { useEffect, useMemo, useRef, useState } from 'react';
import type { Log } from '../../../api/client';
import { usePagedList } from '../../../api/paging';
import { navigate, useRoute } from '../../../app/router';
import { PagedTable } from '../../../components/ListStatus';
import { Page } from '../../../components/Page';
import { TIME_ZONE, timeFormat } from '../../../format';
import { Filters, filtersFromSearch, filtersToSearch } from '../api/filters';
import { useEntityTypes, useLogList } from '../api/logs';
import { ExportButtons } from './ExportButtons';
import { FilterForm } from './FilterForm';
import { Integrity } from './Integrity';
import { LogDetail } from './LogDetail';

/** /console/logs: the filters (the address's query, so a link opens the same listing), export, integrity, the table. */
export function LogsPage() {
  const { search } = useRoute();
  // The address is the filter (a deep link, Back and Forward): read from it, never kept apart.
  const filters = useMemo(() => filtersFromSearch(search), [search]);
  const entityTypes = useEntityTypes();
  // The form and the table start afresh for other filters (keyed by them; siblings, so each key of its own).
  const current = filtersToSearch(filters);

  return (
    <Page title="Audit logs" className="logs">
      <FilterForm key={`form${current}`} initial={filters} entityTypes={entityTypes} onApply={(next: Filters) => navigate(`logs${filtersToSearch(next)}`)} />
      <div className="toolbar">
        <ExportButtons filters={filters} />
        <Integrity />
      </div>
      {/* Other filters, another listing: its own pages and no log selected. */}
      <LogsTable key={`table${current}`} filters={filters} />
    </Page>
  );
}

/** The logs under `filters`, newest first; the next page loads when the end of the table comes into view. */
function LogsTable({ filters }: { filters: Filters }) {
  const list = usePagedList(useLogList(filters));
  const { loadMore } = list;
  const [selected, setSelected] = useState<Log | null>(null);

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

  return (
    <div className="logs-body">
      <section className="table-wrap" aria-label="Logs, newest first">
        <PagedTable
          list={list}
          caption="Audit logs, newest first"
          columns={[`Time (${TIME_ZONE})`, 'Entity type', 'Entity id', 'Operation', 'Actor', 'Message']}
          row={(log) => (
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
          )}
          testId="logs-status"
          empty="No logs match these filters."
          shown={(n, more) => (more ? `${n} logs shown; scroll for more.` : `${n} logs shown: the end of the list.`)}
        >
          <div ref={sentinel} className="sentinel" />
        </PagedTable>
      </section>
      {selected && <LogDetail log={selected} onClose={() => setSelected(null)} />}
    </div>
  );
}
