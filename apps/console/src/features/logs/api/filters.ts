import type { LogQuery } from '../../../api/client';

/** The filters a deep link carries: the query string of /console/logs, in the API's own parameter names. */
export interface Filters {
  entity_type: string;
  entity_id: string;
  actor_id: string;
  /** ISO instants (UTC) in the URL, so a link means the same moment in every time zone. */
  start_date: string;
  end_date: string;
}

export const FILTER_NAMES: Array<keyof Filters> = ['entity_type', 'entity_id', 'actor_id', 'start_date', 'end_date'];

export const NO_FILTERS: Filters = { entity_type: '', entity_id: '', actor_id: '', start_date: '', end_date: '' };

export function filtersFromSearch(search: string): Filters {
  const params = new URLSearchParams(search);
  const filters = {} as Filters;
  for (const name of FILTER_NAMES) filters[name] = params.get(name) ?? '';
  return filters;
}

export function filtersToSearch(filters: Filters): string {
  const params = new URLSearchParams();
  for (const name of FILTER_NAMES) if (filters[name]) params.set(name, filters[name]);
  const search = params.toString();
  return search ? `?${search}` : '';
}

/** The filters set, as query parameters of GET /logs and GET /logs/export. */
export function filterParams(filters: Filters): Record<string, string> {
  const query: Record<string, string> = {};
  for (const name of FILTER_NAMES) if (filters[name]) query[name] = filters[name];
  return query;
}

/** One page of GET /logs: `size` logs under the filters, from the cursor `start`. */
export function listQuery(filters: Filters, size: number, start?: string): LogQuery {
  return { size, ...filterParams(filters), ...(start ? { start } : {}) } as LogQuery;
}
