import type { components } from '../../../api/schema.gen';
import { NO_RATE_LIMIT, RateLimitDraft, rateLimitBody, rateLimitDraft } from '../../../components/RateLimitFields';
import type { CodeProblem } from '../../../editor/CodeEditor';

// The proxy form's model: what it holds, what a create and an update send, and a compile error's position.

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
  const configuration: Record<string, string | null> = Object.fromEntries([
    ...removed.map((key) => [key, null]),
    ...form.configuration.map((r) => [r.key, r.value]),
  ]);
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
