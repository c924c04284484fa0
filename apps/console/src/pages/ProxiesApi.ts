import type { Api } from '../api/client';
import type { components } from '../api/schema.gen';
import type { CodeProblem } from '../editor/CodeEditor';
import { NO_RATE_LIMIT, RateLimitDraft, rateLimitBody, rateLimitDraft } from '../components/RateLimitFields';

export type Proxy = components['schemas']['ProxyResponse'];
type ProxyBody = components['schemas']['ProxyBodyDto'];
type ProxyPatch = components['schemas']['PatchProxyDto'];

export const TRANSFORMS = ['request_transform', 'response_transform'] as const;
export type TransformField = (typeof TRANSFORMS)[number];

/** One configuration member as the form edits it (an ordered list, so a row can be renamed or emptied). */
export interface ConfigRow {
  key: string;
  value: string;
}

/** What the proxy form holds. Transform code '' means "no transform". */
export interface ProxyForm {
  name: string;
  destination_url: string;
  require_auth: boolean;
  application_id: string;
  request_transform: string;
  response_transform: string;
  configuration: ConfigRow[];
  /** Counted per proxy, across its callers. */
  rate_limit: RateLimitDraft;
}

export const EMPTY_FORM: ProxyForm = {
  name: '',
  destination_url: 'https://',
  require_auth: true,
  application_id: '',
  request_transform: '',
  response_transform: '',
  configuration: [],
  rate_limit: NO_RATE_LIMIT,
};

export const TRANSFORM_TEMPLATES: Record<TransformField, string> = {
  request_transform: 'module.exports = async function (req) {\n  const { body, headers } = req.args;\n  return { body, headers };\n};\n',
  response_transform: 'module.exports = async function (req) {\n  const { body, headers } = req.args;\n  return { body, headers };\n};\n',
};

export function formOf(proxy: Proxy): ProxyForm {
  return {
    name: proxy.name,
    destination_url: proxy.destination_url,
    require_auth: proxy.require_auth,
    application_id: proxy.application_id ?? '',
    request_transform: proxy.request_transform?.code ?? '',
    response_transform: proxy.response_transform?.code ?? '',
    configuration: Object.entries(proxy.configuration ?? {}).map(([key, value]) => ({ key, value })),
    rate_limit: rateLimitDraft(proxy.rate_limit),
  };
}

/** The form's own checks of the configuration rows (the API checks the rest): messages by row index. */
export function configurationErrors(rows: readonly ConfigRow[]): Map<number, string> {
  const errors = new Map<number, string>();
  const seen = new Set<string>();
  rows.forEach((row, i) => {
    if (row.key === '') errors.set(i, 'A name is required.');
    else if (seen.has(row.key)) errors.set(i, `"${row.key}" is named twice.`);
    else if (row.value.length > 10_000) errors.set(i, 'A value is at most 10,000 characters.');
    seen.add(row.key);
  });
  if (rows.length > 100) errors.set(100, 'At most 100 members.');
  return errors;
}

function configurationObject(rows: readonly ConfigRow[]): Record<string, string> {
  // Object.fromEntries makes plain own properties, so `__proto__` or `toString` are members like any other.
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

const transform = (code: string) => (code.trim() === '' ? null : { code });

/** What a create and an update both send: every field the form edits but the configuration. */
function fields(form: ProxyForm) {
  return {
    name: form.name,
    destination_url: form.destination_url,
    require_auth: form.require_auth,
    request_transform: transform(form.request_transform),
    response_transform: transform(form.response_transform),
    application: form.application_id.trim() ? { id: form.application_id.trim() } : null,
  };
}

/** POST /proxies: the whole form. */
export function createBody(form: ProxyForm): ProxyBody {
  return {
    ...fields(form),
    configuration: form.configuration.length > 0 ? configurationObject(form.configuration) : null,
    rate_limit: rateLimitBody(form.rate_limit),
  };
}

/**
 * PATCH /proxies/{id} (merge patch): every field the form edits, and the configuration members it removed as null.
 * A PATCH, not a PUT, so what the form does not show stays as it is; the rate limit is sent only when the form's
 * differs from the proxy's as loaded, so a limit set elsewhere meanwhile is not undone by saving another field.
 */
export function patchBody(form: ProxyForm, before: Proxy): ProxyPatch {
  const kept = new Set(form.configuration.map((r) => r.key));
  const removed = Object.keys(before.configuration ?? {}).filter((key) => !kept.has(key));
  // Built by Object.fromEntries (never by assignment), so a member named `__proto__` is a member, not a prototype.
  const configuration: Record<string, string | null> = Object.fromEntries([...removed.map((key) => [key, null]), ...form.configuration.map((r) => [r.key, r.value])]);
  const rateLimit = rateLimitBody(form.rate_limit);
  const changed = JSON.stringify(rateLimit) !== JSON.stringify(rateLimitBody(rateLimitDraft(before.rate_limit)));
  return { ...fields(form), configuration, ...(changed ? { rate_limit: rateLimit } : {}) };
}

const AT = /\s*\(line (\d+), column (\d+)\)\s*$/;

/**
 * A compile error of the API (`request_transform.code: does not compile: SyntaxError: Unexpected token '}' (line 4,
 * column 1)`, CONTRACT section 6) as a problem at its line and column; undefined when the message names no position.
 */
export function compileProblem(message: string): CodeProblem | undefined {
  const at = AT.exec(message);
  if (!at) return undefined;
  return { line: Number(at[1]), column: Number(at[2]), message: message.slice(0, at.index) };
}

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type Method = (typeof METHODS)[number];

export interface TryRequest {
  proxyKey: string;
  method: Method;
  /** The more path after /proxy/, e.g. `orders/1` (segments separated by `/`, each sent percent-encoded). */
  path: string;
  /** A query string without the leading `?`, e.g. `a=1&b=2`. */
  query: string;
  contentType: string;
  body: string;
  /** Send the signed-in key as SVC-API-KEY (what a proxy with require_auth needs). */
  sendApiKey: boolean;
}

export interface TryResult {
  status: number;
  statusText: string;
  headers: Array<[string, string]>;
  body: string;
  ms: number;
}

/**
 * The API's origin, which the page's <meta> names: `/proxy` serves tenants' bytes, so it is never on the console's
 * origin (docs/security.md, "Origins"); the API shares its responses with this origin alone (CORS). Under `vite dev`
 * (the placeholder left) this origin.
 */
function apiOrigin(): string {
  const named = document.querySelector<HTMLMetaElement>('meta[name="gatehouse-api-origin"]')?.content ?? '';
  return /^https?:\/\//.test(named) ? named : window.location.origin;
}

/**
 * Sends one request through /proxy/... on the API's origin with the proxy's key, through the signed-in client (so its
 * SVC-API-KEY goes along, or is taken off when `sendApiKey` is false), and reads the raw response whatever its type or
 * status.
 */
export async function tryProxy(api: Api, request: TryRequest): Promise<TryResult> {
  let raw: Response | undefined;
  const started = performance.now();
  const capture = async (req: Request): Promise<Response> => {
    const headers = new Headers(req.headers);
    if (!request.sendApiKey) headers.delete('SVC-API-KEY');
    // The more path exactly as typed: each segment encoded, the slashes kept (an encoded slash is a 400).
    const url = new URL(req.url);
    const api = new URL(apiOrigin());
    url.protocol = api.protocol;
    url.host = api.host;
    const more = request.path.replace(/^\/+/, '');
    url.pathname = more ? `/proxy/${more.split('/').map(encodeURIComponent).join('/')}` : '/proxy';
    url.search = request.query.replace(/^\?/, '');
    const hasBody = request.method !== 'GET' && request.body !== '';
    if (hasBody) headers.set('Content-Type', request.contentType || 'text/plain');
    const res = await fetch(url, { method: request.method, headers, body: hasBody ? request.body : undefined });
    raw = res.clone();
    return res;
  };
  await api.request(request.method.toLowerCase() as 'get', '/proxy', {
    headers: { 'SVC-PROXY-KEY': request.proxyKey },
    fetch: capture,
    parseAs: 'text',
  });
  const res = raw!;
  return {
    status: res.status,
    statusText: res.statusText,
    headers: [...res.headers.entries()],
    body: await res.text(),
    ms: Math.round(performance.now() - started),
  };
}
