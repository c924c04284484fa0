import { FieldErrorCollector } from '../shared/domain-error';
import { MAX_NAME_LENGTH, validateName } from '../applications/application';
import { randomBase62 } from '../applications/api-key';
import { DestinationPolicy } from './destination-policy';
import { RateLimit, validateRateLimit } from '../rate-limits/rate-counter';

export interface ProxyTransform {
  code: string;
}

/** A pre-configured route to a destination, with optional transform code (spec 2.4). */
export interface Proxy {
  id: string;
  tenantId: string;
  name: string;
  /** Names the proxy on invocation; generated here, never supplied by a caller. */
  key: string;
  destinationUrl: string;
  requestTransform: ProxyTransform | null;
  responseTransform: ProxyTransform | null;
  configuration: Record<string, string> | null;
  /** The application the transform's `svc` client acts as. */
  applicationId: string | null;
  requireAuth: boolean;
  /** Invocations of this proxy, counted across all its callers; null: unlimited. */
  rateLimit: RateLimit | null;
  createdBy: string | null;
  createdAt: Date;
  modifiedBy: string | null;
  modifiedAt: Date | null;
}

/** What a create or a replace (PUT) sets; an omitted optional field takes its default. */
export interface ProxyInput {
  name: string;
  destinationUrl: string;
  requestTransform?: ProxyTransform | null;
  responseTransform?: ProxyTransform | null;
  applicationId?: string | null;
  configuration?: Record<string, string> | null;
  requireAuth?: boolean | null;
  rateLimit?: RateLimit | null;
}

/**
 * An RFC 7396 merge patch in domain terms: an absent member leaves the field alone, `null` clears it.
 * Transforms and the configuration are objects, so they merge member by member.
 */
export interface ProxyPatch {
  name?: string | null;
  destinationUrl?: string | null;
  requestTransform?: { code?: string | null } | null;
  responseTransform?: { code?: string | null } | null;
  applicationId?: string | null;
  configuration?: Record<string, string | null> | null;
  requireAuth?: boolean | null;
  rateLimit?: { limit?: number | null; windowSeconds?: number | null } | null;
}

/**
 * A configuration map as a null-prototype object: every key, `__proto__`, `constructor` and `toString` included, is an
 * own data member, and a key that was not set reads as undefined rather than as an Object.prototype member.
 */
export function stringMap<T>(entries: Iterable<readonly [string, T]>): Record<string, T> {
  const map: Record<string, T> = Object.create(null);
  // No prototype means no `__proto__` setter: each assignment defines a plain data member.
  for (const [key, value] of entries) map[key] = value;
  return map;
}

export const PROXY_KEY_LENGTH = 32;
export const MAX_DESTINATION_URL_LENGTH = 400;
export const MAX_TRANSFORM_CODE_LENGTH = 50_000;
export const MAX_CONFIGURATION_ENTRIES = 100;
export const MAX_CONFIGURATION_KEY_LENGTH = 100;
export const MAX_CONFIGURATION_VALUE_LENGTH = 10_000;
export { MAX_NAME_LENGTH as MAX_PROXY_NAME_LENGTH };

const PROXY_KEY_PATTERN = /^[0-9A-Za-z]{22,64}$/;

export function generateProxyKey(): string {
  return randomBase62(PROXY_KEY_LENGTH);
}

/** Cheap shape check, so junk keys never reach the database. */
export function looksLikeProxyKey(value: string): boolean {
  return PROXY_KEY_PATTERN.test(value);
}

export type TransformField = 'request_transform' | 'response_transform';

/** The rules of spec 2.4 and CONTRACT.md section 6 that need nothing but the input (and the operator's policy). */
export function validateProxyInput(input: ProxyInput, policy: DestinationPolicy, errors: FieldErrorCollector): void {
  if (typeof input.name !== 'string') errors.add('name', 'is required');
  else validateName(input.name, errors);
  validateDestinationUrl(input.destinationUrl, policy, errors);
  validateTransform(input.requestTransform, 'request_transform', errors);
  validateTransform(input.responseTransform, 'response_transform', errors);
  validateConfiguration(input.configuration, errors);
  if (input.requireAuth != null && typeof input.requireAuth !== 'boolean') errors.add('require_auth', 'must be a boolean');
  validateRateLimit(input.rateLimit, 'rate_limit', errors);
}

export function validateDestinationUrl(value: unknown, policy: DestinationPolicy, errors: FieldErrorCollector, field = 'destination_url'): void {
  if (typeof value !== 'string' || value.length === 0) {
    errors.add(field, 'is required');
    return;
  }
  if (value.length > MAX_DESTINATION_URL_LENGTH) {
    errors.add(field, `must be at most ${MAX_DESTINATION_URL_LENGTH} characters`);
    return;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    errors.add(field, 'must be an absolute URL');
    return;
  }
  const schemes = policy.allowHttp ? 'an https:// or http:// URL' : 'an https:// URL';
  const scheme = /^(https?):\/\//i.exec(value)?.[1]?.toLowerCase();
  if (!(scheme === 'https' || (scheme === 'http' && policy.allowHttp))) errors.add(field, `must be ${schemes}`);
  if (/\s/.test(value)) errors.add(field, 'must not contain whitespace');
  if (url.username || url.password) errors.add(field, 'must not contain credentials');
  // The request's own path and query are appended on invocation (CONTRACT.md section 7): a fixed query or fragment could not be.
  if (url.search || value.includes('?')) errors.add(field, 'must not contain a query string');
  if (url.hash || value.includes('#')) errors.add(field, 'must not contain a fragment');
  if (!url.hostname) errors.add(field, 'must name a host');
  else if (!policy.allowsLiteralHost(url.hostname)) {
    errors.add(field, 'must not be a private, loopback, link-local or otherwise non-public address');
  }
}

function validateTransform(transform: ProxyTransform | null | undefined, field: TransformField, errors: FieldErrorCollector): void {
  if (transform == null) return;
  if (typeof transform.code !== 'string') {
    errors.add(`${field}.code`, 'is required');
    return;
  }
  if (transform.code.trim().length === 0) errors.add(`${field}.code`, 'must not be empty');
  if (transform.code.length > MAX_TRANSFORM_CODE_LENGTH) {
    errors.add(`${field}.code`, `must be at most ${MAX_TRANSFORM_CODE_LENGTH} characters`);
  }
}

function validateConfiguration(configuration: Record<string, unknown> | null | undefined, errors: FieldErrorCollector): void {
  if (configuration == null) return;
  if (typeof configuration !== 'object' || Array.isArray(configuration)) {
    errors.add('configuration', 'must be an object mapping strings to strings');
    return;
  }
  const entries = Object.entries(configuration);
  if (entries.length > MAX_CONFIGURATION_ENTRIES) {
    errors.add('configuration', `must hold at most ${MAX_CONFIGURATION_ENTRIES} entries`);
  }
  for (const [key, value] of entries) {
    const field = `configuration.${key.length > 100 ? `${key.slice(0, 100)}...` : key}`;
    if (key.length === 0 || key.length > MAX_CONFIGURATION_KEY_LENGTH) {
      errors.add(field, `names must be 1 to ${MAX_CONFIGURATION_KEY_LENGTH} characters`);
    }
    if (typeof value !== 'string') errors.add(field, 'must be a string');
    else if (value.length > MAX_CONFIGURATION_VALUE_LENGTH) {
      errors.add(field, `must be at most ${MAX_CONFIGURATION_VALUE_LENGTH} characters`);
    }
  }
}

/** The proxy as a replace (PUT) would describe it, so a patch can be applied and validated like a PUT body. */
export function inputOf(proxy: Proxy): ProxyInput {
  return {
    name: proxy.name,
    destinationUrl: proxy.destinationUrl,
    requestTransform: proxy.requestTransform,
    responseTransform: proxy.responseTransform,
    applicationId: proxy.applicationId,
    configuration: proxy.configuration,
    requireAuth: proxy.requireAuth,
    rateLimit: proxy.rateLimit ?? null,
  };
}

/** RFC 7396 over the proxy's fields: absent leaves alone, `null` clears, objects merge member by member. */
export function applyProxyPatch(current: ProxyInput, patch: ProxyPatch): ProxyInput {
  const merged: ProxyInput = { ...current };
  if (patch.name !== undefined) merged.name = patch.name as string;
  if (patch.destinationUrl !== undefined) merged.destinationUrl = patch.destinationUrl as string;
  if (patch.requestTransform !== undefined) merged.requestTransform = mergeTransform(current.requestTransform, patch.requestTransform);
  if (patch.responseTransform !== undefined) merged.responseTransform = mergeTransform(current.responseTransform, patch.responseTransform);
  if (patch.applicationId !== undefined) merged.applicationId = patch.applicationId;
  if (patch.configuration !== undefined) merged.configuration = mergeConfiguration(current.configuration, patch.configuration);
  if (patch.requireAuth !== undefined) merged.requireAuth = patch.requireAuth;
  if (patch.rateLimit !== undefined) merged.rateLimit = mergeRateLimit(current.rateLimit, patch.rateLimit);
  return merged;
}

/** Member by member, like any object of a merge patch; a result missing a member fails validation. */
function mergeRateLimit(current: RateLimit | null | undefined, patch: NonNullable<ProxyPatch['rateLimit']> | null): RateLimit | null {
  if (patch === null) return null;
  const merged: Partial<RateLimit> = { ...(current ?? {}) };
  if (patch.limit !== undefined) merged.limit = patch.limit ?? undefined;
  if (patch.windowSeconds !== undefined) merged.windowSeconds = patch.windowSeconds ?? undefined;
  return merged as RateLimit;
}

function mergeTransform(current: ProxyTransform | null | undefined, patch: { code?: string | null } | null): ProxyTransform | null {
  if (patch === null) return null;
  if (patch.code === undefined) return current ?? null;
  // A transform is nothing but its code: clearing the code clears the transform.
  return patch.code === null ? null : { code: patch.code };
}

function mergeConfiguration(current: Record<string, string> | null | undefined, patch: Record<string, string | null> | null): Record<string, string> | null {
  if (patch === null) return null;
  // A Map, so that a member named `__proto__` is data like any other.
  const merged = new Map(Object.entries(current ?? {}));
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) merged.delete(key);
    else merged.set(key, value);
  }
  return stringMap(merged);
}
