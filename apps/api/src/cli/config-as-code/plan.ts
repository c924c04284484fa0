import { ApplicationSpec, CurrentApplication, ProxySpec, RateLimitSpec, RuleSpec, TenantSpec, TenantState } from './model';

export type EntityKind = 'application' | 'proxy';

export type Change =
  | { action: 'create'; kind: 'application'; name: string; desired: ApplicationSpec }
  | { action: 'create'; kind: 'proxy'; name: string; desired: ProxySpec }
  | { action: 'update'; kind: 'application'; name: string; id: string; desired: ApplicationSpec; fields: string[]; self: boolean }
  | { action: 'update'; kind: 'proxy'; name: string; id: string; desired: ProxySpec; fields: string[] }
  | { action: 'delete'; kind: EntityKind; name: string; id: string };

export interface Plan {
  /** In the order apply makes them: applications before the proxies bound to them, deletions last. */
  changes: Change[];
  unchanged: number;
  /** In the tenant, not in the file, left as they are (without --prune). */
  unmanaged: Array<{ kind: EntityKind; name: string }>;
  /** Sections the file leaves out: not compared, never pruned. */
  notManaged: string[];
  /** What makes the file impossible to apply to this tenant; nothing is changed when there is one. */
  problems: string[];
}

/** The changes that make the tenant what the file says: entities matched by name, the tenant's extras deleted only with `prune`. */
export function computePlan(spec: TenantSpec, state: TenantState, options: { prune: boolean }): Plan {
  const plan: Plan = { changes: [], unchanged: 0, unmanaged: [], notManaged: [], problems: [] };
  const updates: Change[] = [];
  const deletes: Change[] = [];
  const applications = state.applications;

  if (spec.applications) {
    const current = applications ?? [];
    for (const desired of spec.applications) {
      const found = match(current, desired.name, 'application', plan);
      if (found === null) continue;
      if (!found) plan.changes.push({ action: 'create', kind: 'application', name: desired.name, desired });
      else if (found.type !== desired.type) {
        plan.problems.push(
          `application '${desired.name}' is ${found.type} in the tenant and ${desired.type} in the file: an application's type never changes (give the new one another name, and delete the old one with --prune)`,
        );
      } else {
        const fields = applicationChanges(found, desired);
        if (fields.length === 0) plan.unchanged++;
        else updates.push({ action: 'update', kind: 'application', name: desired.name, id: found.id, desired, fields, self: found.id === state.self?.id });
      }
    }
    extras(current, spec.applications, 'application', options.prune, state.self?.id, plan, deletes);
  } else plan.notManaged.push('applications');

  if (spec.proxies) {
    const current = state.proxies ?? [];
    for (const desired of spec.proxies) {
      checkBinding(desired, spec, applications, plan);
      const found = match(current, desired.name, 'proxy', plan);
      if (found === null) continue;
      if (!found) plan.changes.push({ action: 'create', kind: 'proxy', name: desired.name, desired });
      else {
        const fields = proxyChanges(found, desired);
        if (fields.length === 0) plan.unchanged++;
        else updates.push({ action: 'update', kind: 'proxy', name: desired.name, id: found.id, desired, fields });
      }
    }
    extras(current, spec.proxies, 'proxy', options.prune, undefined, plan, deletes);
  } else plan.notManaged.push('proxies');

  // Creations (applications first), updates (the key's own application last: it may lose what the rest needs),
  // then deletions, proxies before the applications they may be bound to.
  plan.changes.sort((a, b) => order(a) - order(b));
  updates.sort((a, b) => order(a) - order(b));
  deletes.sort((a, b) => order(b) - order(a));
  plan.changes.push(...updates, ...deletes);
  return plan;
}

function order(change: Change): number {
  return (change.kind === 'application' ? 0 : 1) + (change.action === 'update' && change.kind === 'application' && change.self ? 2 : 0);
}

/** The one entity of that name; undefined when there is none; null (and a problem) when the tenant has several. */
function match<T extends { name: string }>(current: T[], name: string, kind: EntityKind, plan: Plan): T | undefined | null {
  const found = current.filter((entity) => entity.name === name);
  if (found.length <= 1) return found[0];
  plan.problems.push(
    `the tenant has ${found.length} ${kind === 'proxy' ? 'proxies' : 'applications'} named '${name}': apply matches by name, so rename or delete all but one first`,
  );
  return null;
}

function extras(
  current: Array<{ id: string; name: string }>,
  declared: Array<{ name: string }>,
  kind: EntityKind,
  prune: boolean,
  selfId: string | undefined,
  plan: Plan,
  deletes: Change[],
): void {
  const names = new Set(declared.map((entity) => entity.name));
  for (const entity of current) {
    // The key in use is the operator's, not the file's: it is never deleted (nor exported).
    if (names.has(entity.name) || entity.id === selfId) continue;
    if (prune) deletes.push({ action: 'delete', kind, name: entity.name, id: entity.id });
    else plan.unmanaged.push({ kind, name: entity.name });
  }
}

/** A proxy acts as a public or private application of the file or of the tenant. */
function checkBinding(proxy: ProxySpec, spec: TenantSpec, applications: CurrentApplication[] | undefined, plan: Plan): void {
  const name = proxy.application;
  if (name === null || spec.applications?.some((app) => app.name === name)) return;
  if (!applications) {
    plan.problems.push(`proxy '${proxy.name}' names application '${name}', and the key may not read applications (application:read) to find it`);
    return;
  }
  const found = applications.filter((app) => app.name === name);
  if (found.length === 0) plan.problems.push(`proxy '${proxy.name}' names application '${name}', which is neither in the file nor in the tenant`);
  else if (found[0]!.type === 'management')
    plan.problems.push(`proxy '${proxy.name}' names '${name}', a management application: a proxy acts as a public or private one`);
  // Several of that name: the file declares none of them, so no match can be made.
  else if (found.length > 1) plan.problems.push(`proxy '${proxy.name}' names application '${name}', and the tenant has ${found.length} of that name`);
}

export function applicationChanges(current: ApplicationSpec, desired: ApplicationSpec): string[] {
  const fields: string[] = [];
  const permissions = setChanges(current.permissions, desired.permissions);
  if (permissions) fields.push(`permissions: ${permissions}`);
  const rules = ruleChanges(current.rules, desired.rules);
  if (rules) fields.push(`rules: ${rules}`);
  if (current.can_create_expiring_applications !== desired.can_create_expiring_applications) {
    fields.push(`can_create_expiring_applications: ${current.can_create_expiring_applications} -> ${desired.can_create_expiring_applications}`);
  }
  if (!sameRateLimit(current.rate_limit, desired.rate_limit)) fields.push(`rate_limit: ${rateLimit(current.rate_limit)} -> ${rateLimit(desired.rate_limit)}`);
  return fields;
}

export function proxyChanges(current: ProxySpec, desired: ProxySpec): string[] {
  const fields: string[] = [];
  if (current.destination_url !== desired.destination_url)
    fields.push(`destination_url: ${JSON.stringify(current.destination_url)} -> ${JSON.stringify(desired.destination_url)}`);
  if (current.require_auth !== desired.require_auth) fields.push(`require_auth: ${current.require_auth} -> ${desired.require_auth}`);
  if (current.application !== desired.application) fields.push(`application: ${quoted(current.application)} -> ${quoted(desired.application)}`);
  const configuration = configurationChanges(current.configuration, desired.configuration);
  if (configuration) fields.push(`configuration: ${configuration}`);
  for (const field of ['request_transform', 'response_transform'] as const) {
    const change = codeChange(current[field], desired[field]);
    if (change) fields.push(`${field}: ${change}`);
  }
  if (!sameRateLimit(current.rate_limit, desired.rate_limit)) fields.push(`rate_limit: ${rateLimit(current.rate_limit)} -> ${rateLimit(desired.rate_limit)}`);
  return fields;
}

function setChanges(current: string[], desired: string[]): string | undefined {
  const added = desired.filter((p) => !current.includes(p)).map((p) => `+${p}`);
  const removed = current.filter((p) => !desired.includes(p)).map((p) => `-${p}`);
  return added.length + removed.length > 0 ? [...added, ...removed].join(' ') : undefined;
}

function ruleChanges(current: RuleSpec[], desired: RuleSpec[]): string | undefined {
  const byPriority = (rules: RuleSpec[]) => new Map(rules.map((rule) => [rule.priority, JSON.stringify(rule)]));
  const before = byPriority(current);
  const after = byPriority(desired);
  const out: string[] = [];
  for (const [priority, rule] of after) {
    if (!before.has(priority)) out.push(`priority ${priority} added`);
    else if (before.get(priority) !== rule) out.push(`priority ${priority} changed`);
  }
  for (const priority of before.keys()) if (!after.has(priority)) out.push(`priority ${priority} removed`);
  return out.length > 0 ? out.join(', ') : undefined;
}

/** Names only: configuration values are often secrets, and a plan is printed. */
function configurationChanges(current: Record<string, string>, desired: Record<string, string>): string | undefined {
  const out: string[] = [];
  for (const key of Object.keys(desired)) {
    if (!Object.hasOwn(current, key)) out.push(`+${key}`);
    else if (current[key] !== desired[key]) out.push(`~${key}`);
  }
  for (const key of Object.keys(current)) if (!Object.hasOwn(desired, key)) out.push(`-${key}`);
  return out.length > 0 ? `${out.join(' ')} (values not shown)` : undefined;
}

function codeChange(current: string | null, desired: string | null): string | undefined {
  if (current === desired) return undefined;
  if (current === null) return `added (${lines(desired!)})`;
  if (desired === null) return 'removed';
  return `changed (${lines(current)} -> ${lines(desired)})`;
}

function lines(code: string): string {
  const n = code.split('\n').length - (code.endsWith('\n') ? 1 : 0);
  return `${n} line${n === 1 ? '' : 's'}`;
}

function sameRateLimit(a: RateLimitSpec | null, b: RateLimitSpec | null): boolean {
  return a?.limit === b?.limit && a?.window_seconds === b?.window_seconds;
}

function rateLimit(limit: RateLimitSpec | null): string {
  return limit ? `${limit.limit} per ${limit.window_seconds} s` : 'none';
}

function quoted(name: string | null): string {
  return name === null ? 'none' : JSON.stringify(name);
}
