import type { components } from '@gatehouse/client';
import { dedupe } from '@gatehouse/domain';

/**
 * What `gatehouse apply` manages, in one canonical form for the file and for the tenant alike: names match entities,
 * lists are sorted, defaults are filled in. Two specs are equal exactly when applying one over the other changes
 * nothing, so the plan, the apply and the export all compare these.
 */

/** Expiring applications live at most a day: they are never declared, exported or pruned. */
export const MANAGED_APPLICATION_TYPES = ['private', 'public', 'management'] as const;
export type ManagedApplicationType = (typeof MANAGED_APPLICATION_TYPES)[number];

export interface RateLimitSpec {
  limit: number;
  window_seconds: number;
}

export interface RuleSpec {
  description?: string;
  priority: number;
  container?: string;
  transform: string;
  permissions: string[];
}

export interface ApplicationSpec {
  name: string;
  type: ManagedApplicationType;
  permissions: string[];
  rules: RuleSpec[];
  can_create_expiring_applications: boolean;
  rate_limit: RateLimitSpec | null;
}

export interface ProxySpec {
  name: string;
  destination_url: string;
  require_auth: boolean;
  /** The name of the application the transforms' `svc` client acts as. */
  application: string | null;
  configuration: Record<string, string>;
  request_transform: string | null;
  response_transform: string | null;
  rate_limit: RateLimitSpec | null;
}

/** A section left out of the file (undefined) is not managed at all: neither compared nor pruned. */
export interface TenantSpec {
  applications?: ApplicationSpec[];
  proxies?: ProxySpec[];
}

export type ApplicationResponse = components['schemas']['ApplicationResponse'];
export type ProxyResponse = components['schemas']['ProxyResponse'];

export interface CurrentApplication extends ApplicationSpec {
  id: string;
}

export interface CurrentProxy extends ProxySpec {
  id: string;
}

/** The tenant as the key in use sees it. */
export interface TenantState {
  tenantId?: string;
  /** The application of the key in use (undefined when the key may not read applications): never deleted or exported. */
  self?: { id: string; name: string; type: string; permissions: Set<string> };
  applications?: CurrentApplication[];
  proxies?: CurrentProxy[];
}

export function canonicalRateLimit(limit: RateLimitSpec | null | undefined): RateLimitSpec | null {
  return limit ? { limit: limit.limit, window_seconds: limit.window_seconds } : null;
}

export function canonicalRule(rule: {
  description?: string | null;
  priority: number;
  container?: string | null;
  transform: string;
  permissions: string[];
}): RuleSpec {
  return {
    ...(rule.description != null ? { description: rule.description } : {}),
    priority: rule.priority,
    ...(rule.container != null ? { container: rule.container } : {}),
    transform: rule.transform,
    permissions: sortedSet(rule.permissions),
  };
}

export function canonicalApplication(
  app: Omit<ApplicationSpec, 'permissions' | 'rules' | 'can_create_expiring_applications' | 'rate_limit'> & {
    permissions?: string[] | null;
    rules?: RuleSpec[] | null;
    can_create_expiring_applications?: boolean | null;
    rate_limit?: RateLimitSpec | null;
  },
): ApplicationSpec {
  return {
    name: app.name,
    type: app.type,
    permissions: sortedSet(app.permissions ?? []),
    rules: (app.rules ?? []).map(canonicalRule).sort((a, b) => a.priority - b.priority),
    can_create_expiring_applications: app.can_create_expiring_applications === true,
    rate_limit: canonicalRateLimit(app.rate_limit),
  };
}

export function canonicalProxy(
  proxy: Omit<ProxySpec, 'require_auth' | 'application' | 'configuration' | 'request_transform' | 'response_transform' | 'rate_limit'> & {
    require_auth?: boolean | null;
    application?: string | null;
    configuration?: Record<string, string> | null;
    request_transform?: string | null;
    response_transform?: string | null;
    rate_limit?: RateLimitSpec | null;
  },
): ProxySpec {
  return {
    name: proxy.name,
    destination_url: proxy.destination_url,
    require_auth: proxy.require_auth ?? true,
    application: proxy.application ?? null,
    configuration: sortedMap(proxy.configuration ?? {}),
    request_transform: proxy.request_transform ?? null,
    response_transform: proxy.response_transform ?? null,
    rate_limit: canonicalRateLimit(proxy.rate_limit),
  };
}

export function applicationFromResponse(response: ApplicationResponse): CurrentApplication {
  return {
    id: response.id,
    ...canonicalApplication({
      name: response.name,
      type: response.type as ManagedApplicationType,
      permissions: response.permissions,
      rules: response.rules.map(canonicalRule),
      can_create_expiring_applications: response.can_create_expiring_applications,
      rate_limit: response.rate_limit,
    }),
  };
}

/**
 * `applicationNames` maps ids to names; an application bound to the proxy that the key cannot see by name is kept as
 * `id:<uuid>`, which no declared name equals.
 */
export function proxyFromResponse(response: ProxyResponse, applicationNames: Map<string, string>): CurrentProxy {
  const application = response.application_id ? (applicationNames.get(response.application_id) ?? `id:${response.application_id}`) : null;
  return {
    id: response.id,
    ...canonicalProxy({
      name: response.name,
      destination_url: response.destination_url,
      require_auth: response.require_auth,
      application,
      configuration: response.configuration,
      request_transform: response.request_transform?.code,
      response_transform: response.response_transform?.code,
      rate_limit: response.rate_limit,
    }),
  };
}

function sortedSet(values: string[]): string[] {
  return dedupe(values).sort();
}

/** A null-prototype copy sorted by key: `__proto__` or `toString` is a configuration name like any other. */
function sortedMap(map: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const key of Object.keys(map).sort()) out[key] = map[key]!;
  return out;
}
