import type { components } from '@gatehouse/client';
import { ApplicationSpec, ProxySpec, TenantState } from './model';
import { Change, Plan } from './plan';
import { call, TenantApi } from './tenant-api';

type ApplicationBody = components['schemas']['CreateApplicationDto'];
type ProxyBody = components['schemas']['ProxyBodyDto'];

/** The plan as apply and diff print it. */
export function renderPlan(plan: Plan, heading: string): string {
  const out = [heading, ''];
  for (const change of plan.changes) {
    if (change.action === 'create') out.push(`  + ${change.kind} ${JSON.stringify(change.name)}${createdAs(change)}`);
    else if (change.action === 'delete') out.push(`  - ${change.kind} ${JSON.stringify(change.name)}`);
    else out.push(`  ~ ${change.kind} ${JSON.stringify(change.name)}`, ...change.fields.map((field) => `      ${field}`));
  }
  if (plan.changes.length > 0) out.push('');
  if (plan.unmanaged.length > 0) {
    out.push(`  not in the file, left as they are (--prune deletes them): ${plan.unmanaged.map((e) => `${e.kind} ${JSON.stringify(e.name)}`).join(', ')}`);
  }
  for (const section of plan.notManaged) out.push(`  ${section}: not in the file, not managed`);
  const counts = (['create', 'update', 'delete'] as const).map((action) => plan.changes.filter((c) => c.action === action).length);
  out.push(
    plan.changes.length === 0
      ? `No changes: the tenant matches the file (${plan.unchanged} unchanged).`
      : `Plan: ${counts[0]} to create, ${counts[1]} to update, ${counts[2]} to delete, ${plan.unchanged} unchanged.`,
  );
  return `${out.join('\n')}\n`;
}

function createdAs(change: Change & { action: 'create' }): string {
  return change.kind === 'application' ? ` (${change.desired.type})` : ` -> ${change.desired.destination_url}`;
}

/**
 * What the key in use lacks for the plan, each with what needs it; empty when it holds everything (or cannot see
 * its own permissions, without application:read: then the service says so at the first refused change).
 */
export function missingPermissions(plan: Plan, state: TenantState): string[] {
  if (!state.self) return [];
  const needed = new Map<string, string[]>();
  for (const change of plan.changes) {
    const permission = `${change.kind}:${change.action}`;
    if (!state.self.permissions.has(permission))
      needed.set(permission, [...(needed.get(permission) ?? []), `${change.action} ${change.kind} '${change.name}'`]);
  }
  return [...needed].map(([permission, uses]) => `${permission} (to ${uses.slice(0, 3).join(', ')}${uses.length > 3 ? `, and ${uses.length - 3} more` : ''})`);
}

export interface ApplyOutcome {
  lines: string[];
  /** The keys of the applications this run created, by name: shown (or written) once, never again. */
  keys: Array<{ name: string; id: string; key: string }>;
  /** The change that failed: the ones before it were made. */
  error?: Error;
}

/** Makes the plan's changes, one ordinary (audited) API call each, in the plan's order; stops at the first refusal. */
export async function executePlan(api: TenantApi, plan: Plan, state: TenantState): Promise<ApplyOutcome> {
  const outcome: ApplyOutcome = { lines: [], keys: [] };
  // Proxies name applications; those this run creates get their ids as it goes.
  const ids = new Map((state.applications ?? []).map((app) => [app.name, app.id]));
  let done = 0;
  for (const change of plan.changes) {
    try {
      await make(api, change, ids, outcome);
    } catch (error) {
      const made = done === 0 ? 'nothing was changed' : `${done} of ${plan.changes.length} changes were made before it; gatehouse diff shows what is left`;
      outcome.error = new Error(`${(error as Error).message} (${made})`);
      return outcome;
    }
    done++;
    outcome.lines.push(`${change.action}d ${change.kind} ${JSON.stringify(change.name)}`);
  }
  outcome.lines.push(`Applied: ${done} change${done === 1 ? '' : 's'}.`);
  return outcome;
}

async function make(api: TenantApi, change: Change, ids: Map<string, string>, outcome: ApplyOutcome): Promise<void> {
  const what = `${verb(change.action)} ${change.kind} ${JSON.stringify(change.name)}`;
  const { api: http } = api.client;
  if (change.action === 'delete') {
    const path = { params: { path: { id: change.id } } };
    await call(api, what, change.kind === 'application' ? http.DELETE('/applications/{id}', path) : http.DELETE('/proxies/{id}', path));
    if (change.kind === 'application') ids.delete(change.name);
    return;
  }
  if (change.kind === 'application') {
    const body = applicationBody(change.desired);
    if (change.action === 'create') {
      const created = await call(api, what, http.POST('/applications', { body: { ...body, type: change.desired.type } }));
      ids.set(change.name, created.id);
      if (created.key) outcome.keys.push({ name: change.name, id: created.id, key: created.key });
    } else await call(api, what, http.PUT('/applications/{id}', { params: { path: { id: change.id } }, body }));
    return;
  }
  const body = proxyBody(change.desired, ids);
  if (change.action === 'create') await call(api, what, http.POST('/proxies', { body }));
  else await call(api, what, http.PUT('/proxies/{id}', { params: { path: { id: change.id } }, body }));
}

/** The whole application as PUT takes it (and POST, with its type): every field, so what is left out is cleared. */
function applicationBody(app: ApplicationSpec): Omit<ApplicationBody, 'type'> {
  return {
    name: app.name,
    permissions: app.permissions as ApplicationBody['permissions'],
    rules: app.rules as ApplicationBody['rules'],
    // Only private applications take it, null or not.
    ...(app.type === 'private' ? { can_create_expiring_applications: app.can_create_expiring_applications } : {}),
    rate_limit: app.rate_limit,
  };
}

/** The whole proxy as PUT takes it: a field left out returns to its default (CONTRACT.md section 3). */
function proxyBody(proxy: ProxySpec, ids: Map<string, string>): ProxyBody {
  const body: ProxyBody = { name: proxy.name, destination_url: proxy.destination_url, require_auth: proxy.require_auth };
  if (Object.keys(proxy.configuration).length > 0) body.configuration = proxy.configuration;
  if (proxy.request_transform !== null) body.request_transform = { code: proxy.request_transform };
  if (proxy.response_transform !== null) body.response_transform = { code: proxy.response_transform };
  if (proxy.application !== null) {
    const id = ids.get(proxy.application);
    // The plan checked the name; an id missing here means the application went away meanwhile.
    if (!id) throw new Error(`application '${proxy.application}' of proxy '${proxy.name}' is no longer in the tenant`);
    body.application = { id };
  }
  if (proxy.rate_limit) body.rate_limit = proxy.rate_limit;
  return body;
}

function verb(action: Change['action']): string {
  return action === 'create' ? 'creating' : action === 'update' ? 'updating' : 'deleting';
}
