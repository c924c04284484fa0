import createClient from 'openapi-fetch';
import type { components, paths } from './schema.gen';

export type Application = components['schemas']['ApplicationResponse'];
export type Log = components['schemas']['LogResponse'];
export type EntityType = components['schemas']['EntityTypeResponse'];
export type LogQuery = NonNullable<paths['/logs']['get']['parameters']['query']>;
export type ExportQuery = NonNullable<paths['/logs/export']['get']['parameters']['query']>;
export type Api = ReturnType<typeof createClient<paths>>;

/** The typed client (generated from apps/api/openapi.json) acting as the holder of `key`, on this same origin. */
export function apiFor(key: string): Api {
  return createClient<paths>({ baseUrl: window.location.origin, headers: { 'SVC-API-KEY': key } });
}

/** The one line to show for a failed call: a ProblemDetails' detail/title (CONTRACT section 2), else the status. */
export function problemText(error: unknown, response: Response): string {
  if (error && typeof error === 'object') {
    const p = error as { detail?: unknown; title?: unknown; errors?: unknown };
    const parts = [p.detail, p.title].filter((v): v is string => typeof v === 'string' && v.length > 0);
    if (parts.length > 0) return parts[0]!;
  }
  return `The service answered ${response.status} ${response.statusText}`.trim();
}
