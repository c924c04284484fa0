import createClient from 'openapi-fetch';
import type { components, paths } from './schema.gen';

export type Application = components['schemas']['ApplicationResponse'];
export type ApplicationType = Application['type'];
export type AccessRule = components['schemas']['AccessRuleDto'];
export type CreateApplication = components['schemas']['CreateApplicationDto'];
export type UpdateApplication = components['schemas']['UpdateApplicationDto'];
export type Permission = components['schemas']['PermissionResponse'];
export type Log = components['schemas']['LogResponse'];
export type Checkpoint = components['schemas']['LogCheckpointResponse'];
export type EntityType = components['schemas']['EntityTypeResponse'];
export type LogQuery = NonNullable<paths['/logs']['get']['parameters']['query']>;
export type ExportQuery = NonNullable<paths['/logs/export']['get']['parameters']['query']>;
export type Api = ReturnType<typeof createClient<paths>>;

/**
 * The typed client (generated from apps/api/openapi.json) acting as the holder of `key`, on this same origin.
 * `onRefused` hears of every 401: the key was regenerated, deleted or expired while the console held it.
 */
export function apiFor(key: string, onRefused?: () => void): Api {
  const client = createClient<paths>({ baseUrl: window.location.origin, headers: { 'SVC-API-KEY': key } });
  if (onRefused) {
    client.use({
      onResponse({ response }) {
        if (response.status === 401) onRefused();
        return undefined;
      },
    });
  }
  return client;
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

/** A ProblemDetails' `errors` (CONTRACT section 2: snake_case field paths such as `rules[0].priority`), or `{}`. */
export function fieldErrors(error: unknown): Record<string, string[]> {
  const errors = error && typeof error === 'object' ? (error as { errors?: unknown }).errors : undefined;
  if (!errors || typeof errors !== 'object') return {};
  const out: Record<string, string[]> = {};
  for (const [path, messages] of Object.entries(errors)) {
    const list = (Array.isArray(messages) ? messages : [messages]).filter((m): m is string => typeof m === 'string');
    if (list.length) out[path] = list;
  }
  return out;
}
