import { Api, apiFor, Application, problemText } from '../api/client';

// The API key lives in memory and in sessionStorage (gone when the tab closes), never in a cookie or localStorage:
// a cookie would travel with every request (CSRF), localStorage would outlive the session on a shared machine.
const STORAGE_KEY = 'gatehouse.console.key';

export function storedKey(): string | null {
  try {
    return window.sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

export function storeKey(key: string): void {
  try {
    window.sessionStorage.setItem(STORAGE_KEY, key);
  } catch {
    // Storage refused (private mode, quota): the key stays in memory for this page only.
  }
}

export function forgetKey(): void {
  try {
    window.sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // Nothing stored.
  }
}

/** A signed-in key: its client, and who it belongs to and what it may do. */
export interface Session {
  api: Api;
  application: Application;
  /** The key may not read its own application (no application:read): `application` holds only what was probed. */
  probed?: boolean;
}

/** Who the key belongs to and what it may do (GET /applications/key), or why it was refused. */
export async function resolveKey(key: string, onRefused: () => void): Promise<{ session: Session } | { error: string }> {
  const api = apiFor(key, onRefused);
  try {
    const { data, error, response } = await api.GET('/applications/key');
    if (data) return { session: { api, application: data } };
    if (response.status === 401) return { error: 'This key was not accepted.' };
    if (response.status === 403) return { session: await probedSession(api) };
    return { error: problemText(error, response) };
  } catch {
    return { error: 'The service could not be reached.' };
  }
}

/**
 * A key without application:read (an auditor's key holding log:read alone, say) cannot read its own application, so
 * what it may list is asked of the lists themselves (logs, log streams, proxies, tokens): one entry each, a 403 meaning no. Only a management key can hold
 * log:read or proxy:read, so that is its type. Nothing else is known: the pages show no action needing more.
 */
async function probedSession(api: Api): Promise<Session> {
  const [logs, streams, proxies, tokens] = await Promise.all([
    api.GET('/logs', { params: { query: { size: 1 } } }),
    api.GET('/logs/streams', { params: { query: { size: 1 } } }),
    api.GET('/proxies', { params: { query: { size: 1 } } }),
    // A private or public application's key (token permissions, no application:read) is the usual one for tokens.
    api.GET('/v2/tokens', { params: { query: { size: 1 } } }),
  ]);
  const permissions = [
    logs.response.ok && 'log:read',
    streams.response.ok && 'log:stream',
    proxies.response.ok && 'proxy:read',
    tokens.response.ok && 'token:read',
  ].filter((p): p is string => typeof p === 'string');
  const application: Application = {
    id: '',
    tenant_id: '',
    name: 'a key without application:read',
    type: 'management',
    permissions: permissions as Application['permissions'],
    rules: [],
    created_at: '',
  };
  return { api, application, probed: true };
}
