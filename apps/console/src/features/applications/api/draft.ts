import type { AccessRule, Application, ApplicationType, CreateApplication } from '../../../api/client';
import { RateLimitDraft, rateLimitBody, rateLimitDraft, toInt } from '../../../components/RateLimitFields';
import { localInputToIso } from '../../../format';

// The application form's model: the draft it edits, the body it sends, and where the API's messages are shown.

export const TYPES: Array<{ value: ApplicationType; label: string; hint: string }> = [
  { value: 'private', label: 'Private', hint: 'A service on a server: tokens, proxy invocation.' },
  { value: 'public', label: 'Public', hint: 'A browser or a device: it may create and update tokens only.' },
  { value: 'management', label: 'Management', hint: 'Manages this tenant: applications, proxies, logs. Takes no rules.' },
  { value: 'expiring', label: 'Expiring', hint: 'Short-lived (at most 24 hours), deleted when it expires; rules with conditions.' },
];

export type Transform = AccessRule['transform'];
export type Condition = NonNullable<AccessRule['conditions']>[number];

export interface ConditionDraft extends Condition {
  key: number;
}

export interface RuleDraft {
  key: number;
  priority: string;
  description: string;
  transform: Transform;
  permissions: string[];
  container: string;
  conditions: ConditionDraft[];
}

export interface Draft {
  name: string;
  type: ApplicationType;
  permissions: string[];
  rules: RuleDraft[];
  canCreateExpiring: boolean;
  expiresAt: string;
  rateLimit: RateLimitDraft;
}

let nextKey = 1;
export const newCondition = (): ConditionDraft => ({ key: nextKey++, attribute: 'id', operator: 'starts_with', value: '' });

export function draftOf(app?: Application): Draft {
  return {
    name: app?.name ?? '',
    type: app?.type ?? 'private',
    permissions: app?.permissions ?? [],
    rules: (app?.rules ?? []).map((r) => ({
      key: nextKey++,
      priority: String(r.priority),
      description: r.description ?? '',
      transform: r.transform,
      permissions: r.permissions,
      container: r.container ?? '',
      conditions: (r.conditions ?? []).map((c) => ({ ...c, key: nextKey++ })),
    })),
    canCreateExpiring: app?.can_create_expiring_applications ?? false,
    expiresAt: '',
    rateLimit: rateLimitDraft(app?.rate_limit),
  };
}

/** The request body, as typed: the API validates it and its messages come back to the fields. */
export function toBody(d: Draft): Omit<CreateApplication, 'type'> {
  const body: Record<string, unknown> = { name: d.name, permissions: d.permissions };
  if (d.type !== 'management') {
    body.rules = d.rules.map((r) => ({
      priority: toInt(r.priority),
      transform: r.transform,
      permissions: r.permissions,
      ...(r.description.trim() ? { description: r.description } : {}),
      ...(d.type === 'expiring'
        ? { conditions: r.conditions.map(({ attribute, operator, value }) => ({ attribute, operator, value })) }
        : r.container
          ? { container: r.container }
          : {}),
    }));
  }
  if (d.type === 'private') body.can_create_expiring_applications = d.canCreateExpiring;
  body.rate_limit = rateLimitBody(d.rateLimit);
  return body as Omit<CreateApplication, 'type'>;
}

/** What a create sends: the body, its type, and the expiry of an expiring application (empty: the API's default). */
export function createBody(d: Draft): CreateApplication {
  return { ...toBody(d), type: d.type, ...(d.type === 'expiring' && d.expiresAt ? { expires_at: localInputToIso(d.expiresAt) || d.expiresAt } : {}) };
}

/** The error paths this form shows at a field; any other goes to the summary above the form. */
const FIELD_PATH =
  /^(name|type|expires_at|can_create_expiring_applications|permissions(\[\d+\])?|rate_limit(\.limit|\.window_seconds)?|rules|rules\[(?<rule>\d+)\](\.(priority|description|transform|container|permissions(\[\d+\])?|conditions(\[(?<condition>\d+)\](\.(attribute|operator|value))?)?))?)$/;

export function shownAtField(path: string, d: Draft): boolean {
  const match = FIELD_PATH.exec(path);
  if (!match) return false;
  if (path.startsWith('rules')) {
    if (d.type === 'management') return false;
    const { rule: ruleIndex, condition } = match.groups ?? {};
    const rule = ruleIndex === undefined ? undefined : d.rules[Number(ruleIndex)];
    if (ruleIndex !== undefined && !rule) return false;
    if (condition !== undefined && !rule?.conditions[Number(condition)]) return false;
  }
  if (path === 'expires_at') return d.type === 'expiring';
  if (path === 'can_create_expiring_applications') return d.type === 'private';
  return true;
}

/** The messages at `path`, and with `items` those at `path[0]`, `path[1]`... (one permission of a list). */
export function at(errors: Record<string, string[]>, path: string, items = false): string[] {
  const out = [...(errors[path] ?? [])];
  if (items) for (const [k, v] of Object.entries(errors)) if (k.startsWith(`${path}[`) && /^\[\d+\]$/.test(k.slice(path.length))) out.push(...v);
  return out;
}

/** `d` with one more rule, its priority after the highest (an expiring application's with an empty condition). */
export function withNewRule(d: Draft): Draft {
  const priority = d.rules.reduce((max, r) => Math.max(max, Number(r.priority) || 0), 0) + 1;
  const rule: RuleDraft = {
    key: nextKey++,
    priority: String(priority),
    description: '',
    transform: 'redact',
    permissions: [],
    container: '',
    conditions: d.type === 'expiring' ? [newCondition()] : [],
  };
  return { ...d, rules: [...d.rules, rule] };
}

/** `d` keeping only the permissions in `names` (a type change), itself when nothing is dropped. */
export function keepingOnly(d: Draft, names: Set<string>): Draft {
  const keep = (list: string[]) => (list.every((p) => names.has(p)) ? list : list.filter((p) => names.has(p)));
  const permissions = keep(d.permissions);
  const rules = d.rules.map((r) => {
    const kept = keep(r.permissions);
    return kept === r.permissions ? r : { ...r, permissions: kept };
  });
  return permissions === d.permissions && rules.every((r, i) => r === d.rules[i]) ? d : { ...d, permissions, rules };
}
