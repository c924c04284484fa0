import { FormEvent, useEffect, useRef, useState } from 'react';
import { AccessRule, Api, Application, ApplicationType, CreateApplication, fieldErrors, Permission, problemText, UpdateApplication } from '../api/client';
import { Field, FieldError } from '../components/Field';
import { RateLimitDraft, rateLimitBody, rateLimitDraft, RateLimitFields, toInt } from '../components/RateLimitFields';
import { Page } from '../components/Page';
import { Link } from '../components/router';
import { localInputToIso, TIME_ZONE } from '../format';

const TYPES: Array<{ value: ApplicationType; label: string; hint: string }> = [
  { value: 'private', label: 'Private', hint: 'A service on a server: tokens, proxy invocation.' },
  { value: 'public', label: 'Public', hint: 'A browser or a device: it may create and update tokens only.' },
  { value: 'management', label: 'Management', hint: 'Manages this tenant: applications, proxies, logs. Takes no rules.' },
  { value: 'expiring', label: 'Expiring', hint: 'Short-lived (at most 24 hours), deleted when it expires; rules with conditions.' },
];

type Transform = AccessRule['transform'];
type Condition = NonNullable<AccessRule['conditions']>[number];

interface ConditionDraft extends Condition {
  key: number;
}

interface RuleDraft {
  key: number;
  priority: string;
  description: string;
  transform: Transform;
  permissions: string[];
  container: string;
  conditions: ConditionDraft[];
}

interface Draft {
  name: string;
  type: ApplicationType;
  permissions: string[];
  rules: RuleDraft[];
  canCreateExpiring: boolean;
  expiresAt: string;
  rateLimit: RateLimitDraft;
}

let nextKey = 1;
const newCondition = (): ConditionDraft => ({ key: nextKey++, attribute: 'id', operator: 'starts_with', value: '' });

function draftOf(app?: Application): Draft {
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
function toBody(d: Draft): Omit<CreateApplication, 'type'> {
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

/** The error paths this form shows at a field; any other goes to the summary above the form. */
const FIELD_PATH =
  /^(name|type|expires_at|can_create_expiring_applications|permissions(\[\d+\])?|rate_limit(\.limit|\.window_seconds)?|rules|rules\[(?<rule>\d+)\](\.(priority|description|transform|container|permissions(\[\d+\])?|conditions(\[(?<condition>\d+)\](\.(attribute|operator|value))?)?))?)$/;

function shownAtField(path: string, d: Draft): boolean {
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
function at(errors: Record<string, string[]>, path: string, items = false): string[] {
  const out = [...(errors[path] ?? [])];
  if (items) for (const [k, v] of Object.entries(errors)) if (k.startsWith(`${path}[`) && /^\[\d+\]$/.test(k.slice(path.length))) out.push(...v);
  return out;
}

function usePermissionCatalogue(api: Api, type: ApplicationType) {
  const [catalogue, setCatalogue] = useState<{ type: ApplicationType; permissions: Permission[] } | { error: string }>();
  useEffect(() => {
    let live = true;
    api
      .GET('/permissions', { params: { query: { application_type: type } } })
      .then(({ data, error, response }) => {
        if (live) setCatalogue(data ? { type, permissions: data } : { error: problemText(error, response) });
      })
      .catch(() => live && setCatalogue({ error: 'The permissions could not be loaded.' }));
    return () => {
      live = false;
    };
  }, [api, type]);
  return catalogue;
}

/** Create (no `existing`) or edit an application. The API's validation messages are shown at their fields. */
export function ApplicationForm({ api, existing, onSaved }: { api: Api; existing?: Application; onSaved: (app: Application) => void }) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(existing));
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [problem, setProblem] = useState<string>();
  const [busy, setBusy] = useState(false);
  const summary = useRef<HTMLDivElement>(null);
  const catalogue = usePermissionCatalogue(api, draft.type);
  const allowed = catalogue && 'permissions' in catalogue && catalogue.type === draft.type ? catalogue.permissions : undefined;

  // A type change keeps only the permissions the new type may hold.
  useEffect(() => {
    if (!allowed) return;
    const names = new Set(allowed.map((p) => p.type));
    setDraft((d) => {
      const keep = (list: string[]) => (list.every((p) => names.has(p)) ? list : list.filter((p) => names.has(p)));
      const permissions = keep(d.permissions);
      const rules = d.rules.map((r) => {
        const kept = keep(r.permissions);
        return kept === r.permissions ? r : { ...r, permissions: kept };
      });
      return permissions === d.permissions && rules.every((r, i) => r === d.rules[i]) ? d : { ...d, permissions, rules };
    });
  }, [allowed]);

  useEffect(() => {
    if (problem) summary.current?.focus();
  }, [problem, errors]);

  const set = <K extends keyof Draft>(name: K, value: Draft[K]) => setDraft((d) => ({ ...d, [name]: value }));
  const setRule = (key: number, change: Partial<RuleDraft>) => setDraft((d) => ({ ...d, rules: d.rules.map((r) => (r.key === key ? { ...r, ...change } : r)) }));

  function addRule() {
    setDraft((d) => {
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
    });
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    try {
      const body = toBody(draft);
      const result = existing
        ? await api.PUT('/applications/{id}', { params: { path: { id: existing.id } }, body: body as UpdateApplication })
        : await api.POST('/applications', {
            body: { ...body, type: draft.type, ...(draft.type === 'expiring' && draft.expiresAt ? { expires_at: localInputToIso(draft.expiresAt) || draft.expiresAt } : {}) },
          });
      if (result.data) {
        onSaved(result.data);
        return;
      }
      setErrors(fieldErrors(result.error));
      setProblem(problemText(result.error, result.response));
    } catch {
      setErrors({});
      setProblem('The service could not be reached.');
    } finally {
      setBusy(false);
    }
  }

  const unplaced = Object.entries(errors).filter(([path]) => !shownAtField(path, draft));
  const placed = Object.keys(errors).length - unplaced.length;
  const typeInfo = TYPES.find((t) => t.value === draft.type)!;
  const title = existing ? `Edit “${existing.name}”` : 'New application';

  return (
    <Page title={title} className="application-form">
      <form className="form" onSubmit={submit} noValidate aria-label={title}>
        {problem && (
          <div className="problem" role="alert" tabIndex={-1} ref={summary} data-testid="form-problem">
            <p>
              <strong>Not saved:</strong> {problem}
              {placed > 0 ? ` See the ${placed === 1 ? 'field' : `${placed} fields`} marked below.` : ''}
            </p>
            {unplaced.length > 0 && (
              <ul>
                {unplaced.map(([path, messages]) => (
                  <li key={path}>
                    <code>{path}</code>: {messages.join(' ')}
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}

        <Field id="app-name" label="Name" error={at(errors, 'name')}>
          {(control) => <input {...control} value={draft.name} maxLength={400} onChange={(e) => set('name', e.target.value)} autoFocus={!existing} />}
        </Field>

        {existing ? (
          <p>
            Type: <strong>{existing.type}</strong> (a type cannot change).
          </p>
        ) : (
          <Field id="app-type" label="Type" hint={typeInfo.hint} error={at(errors, 'type')}>
            {(control) => (
              <select {...control} value={draft.type} onChange={(e) => set('type', e.target.value as ApplicationType)}>
                {TYPES.map((t) => (
                  <option key={t.value} value={t.value}>
                    {t.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
        )}

        {!existing && draft.type === 'expiring' && (
          <Field
            id="app-expires"
            label={`Expires at (${TIME_ZONE}, optional)`}
            hint="Empty: one minute from now. At most 24 hours ahead; the application is deleted then."
            error={at(errors, 'expires_at')}
          >
            {(control) => <input {...control} type="datetime-local" value={draft.expiresAt} onChange={(e) => set('expiresAt', e.target.value)} />}
          </Field>
        )}

        <PermissionPicker
          id="app-permissions"
          legend="Permissions"
          catalogue={catalogue}
          allowed={allowed}
          selected={draft.permissions}
          onChange={(permissions) => set('permissions', permissions)}
          errors={at(errors, 'permissions', true)}
          describe
        />

        {draft.type === 'private' && (
          <div className="field checkbox">
            <label>
              <input
                type="checkbox"
                checked={draft.canCreateExpiring}
                onChange={(e) => set('canCreateExpiring', e.target.checked)}
                aria-invalid={errors.can_create_expiring_applications ? true : undefined}
                aria-describedby={errors.can_create_expiring_applications ? 'app-expiring-error' : undefined}
              />{' '}
              May create expiring applications (and nothing else about applications)
            </label>
            <FieldError id="app-expiring-error" messages={at(errors, 'can_create_expiring_applications')} />
          </div>
        )}

        <RateLimitFields
          idPrefix="rate-limit"
          draft={draft.rateLimit}
          onChange={(rateLimit) => set('rateLimit', rateLimit)}
          hint="Empty: the tenant's default, if the operator set one, else unlimited."
          messagesAt={(path) => at(errors, path)}
        />

        {draft.type !== 'management' && (
          <fieldset className="group rules" aria-describedby={at(errors, 'rules').length ? 'rules-error' : undefined}>
            <legend>Access rules</legend>
            <p className="hint">
              {draft.type === 'expiring'
                ? 'Each rule applies to the tokens its conditions match; the lowest priority number wins.'
                : 'Each rule applies to the tokens in its container (e.g. /pci/high/); the lowest priority number wins.'}
            </p>
            {draft.rules.map((rule, i) => (
              <RuleEditor
                key={rule.key}
                index={i}
                rule={rule}
                type={draft.type}
                catalogue={catalogue}
                allowed={allowed}
                errors={errors}
                onChange={(change) => setRule(rule.key, change)}
                onRemove={() => setDraft((d) => ({ ...d, rules: d.rules.filter((r) => r.key !== rule.key) }))}
              />
            ))}
            <FieldError id="rules-error" messages={at(errors, 'rules')} />
            <button type="button" className="secondary" onClick={addRule}>
              Add a rule
            </button>
          </fieldset>
        )}

        <div className="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Saving…' : existing ? 'Save changes' : 'Create application'}
          </button>
          <Link to={existing ? `applications/${existing.id}` : 'applications'} className="button secondary">
            Cancel
          </Link>
        </div>
      </form>
    </Page>
  );
}

function PermissionPicker({
  id,
  legend,
  catalogue,
  allowed,
  selected,
  onChange,
  errors,
  describe,
}: {
  id: string;
  legend: string;
  catalogue: ReturnType<typeof usePermissionCatalogue>;
  allowed: Permission[] | undefined;
  selected: string[];
  onChange: (permissions: string[]) => void;
  errors: string[];
  describe?: boolean;
}) {
  const toggle = (name: string, on: boolean) => onChange(on ? [...selected, name] : selected.filter((p) => p !== name));
  return (
    <fieldset className="group permissions" id={id} aria-describedby={errors.length ? `${id}-error` : undefined}>
      <legend>{legend}</legend>
      {catalogue && 'error' in catalogue ? (
        <p className="error">{catalogue.error}</p>
      ) : !allowed ? (
        <p className="hint">Loading the permissions…</p>
      ) : (
        <div className="checks">
          {allowed.map((p) => (
            <div key={p.type} className="check">
              <input
                type="checkbox"
                id={`${id}-${p.type}`}
                checked={selected.includes(p.type)}
                onChange={(e) => toggle(p.type, e.target.checked)}
                aria-describedby={describe ? `${id}-${p.type}-hint` : undefined}
              />
              <label htmlFor={`${id}-${p.type}`} className="mono">
                {p.type}
              </label>
              {describe && (
                <span id={`${id}-${p.type}-hint`} className="hint">
                  {p.description}
                </span>
              )}
            </div>
          ))}
        </div>
      )}
      <FieldError id={`${id}-error`} messages={errors} />
    </fieldset>
  );
}

function RuleEditor({
  index,
  rule,
  type,
  catalogue,
  allowed,
  errors,
  onChange,
  onRemove,
}: {
  index: number;
  rule: RuleDraft;
  type: ApplicationType;
  catalogue: ReturnType<typeof usePermissionCatalogue>;
  allowed: Permission[] | undefined;
  errors: Record<string, string[]>;
  onChange: (change: Partial<RuleDraft>) => void;
  onRemove: () => void;
}) {
  const path = `rules[${index}]`;
  const id = `rule-${rule.key}`;
  const setCondition = (key: number, change: Partial<Condition>) => onChange({ conditions: rule.conditions.map((c) => (c.key === key ? { ...c, ...change } : c)) });
  return (
    <fieldset className="rule" aria-describedby={at(errors, path).length ? `${id}-error` : undefined}>
      <legend>Rule {index + 1}</legend>
      <div className="row">
        <Field id={`${id}-priority`} label="Priority" error={at(errors, `${path}.priority`)}>
          {(control) => (
            <input {...control} type="number" inputMode="numeric" min={1} step={1} value={rule.priority} onChange={(e) => onChange({ priority: e.target.value })} />
          )}
        </Field>
        <Field id={`${id}-transform`} label="Transform" error={at(errors, `${path}.transform`)}>
          {(control) => (
            <select {...control} value={rule.transform} onChange={(e) => onChange({ transform: e.target.value as Transform })}>
              <option value="redact">redact</option>
              <option value="mask">mask</option>
              <option value="reveal">reveal</option>
            </select>
          )}
        </Field>
        {type !== 'expiring' && (
          <Field id={`${id}-container`} label="Container" error={at(errors, `${path}.container`)}>
            {(control) => <input {...control} className="mono" placeholder="/pci/high/" value={rule.container} onChange={(e) => onChange({ container: e.target.value })} />}
          </Field>
        )}
        <Field id={`${id}-description`} label="Description (optional)" className="grow" error={at(errors, `${path}.description`)}>
          {(control) => <input {...control} value={rule.description} onChange={(e) => onChange({ description: e.target.value })} />}
        </Field>
      </div>
      {type === 'expiring' && (
        <fieldset className="conditions" aria-describedby={at(errors, `${path}.conditions`).length ? `${id}-conditions-error` : undefined}>
          <legend>Conditions (all must hold)</legend>
          {rule.conditions.map((c, j) => {
            const cpath = `${path}.conditions[${j}]`;
            const cid = `${id}-condition-${c.key}`;
            return (
              <div className="row condition" key={c.key}>
                <Field id={`${cid}-attribute`} label={`Condition ${j + 1}: attribute`} error={at(errors, `${cpath}.attribute`)}>
                  {(control) => (
                    <select {...control} value={c.attribute} onChange={(e) => setCondition(c.key, { attribute: e.target.value as Condition['attribute'] })}>
                      <option value="id">token id</option>
                      <option value="container">container</option>
                    </select>
                  )}
                </Field>
                <Field id={`${cid}-operator`} label="Operator" error={at(errors, `${cpath}.operator`)}>
                  {(control) => (
                    <select {...control} value={c.operator} onChange={(e) => setCondition(c.key, { operator: e.target.value as Condition['operator'] })}>
                      <option value="starts_with">starts with</option>
                      <option value="equals">equals</option>
                    </select>
                  )}
                </Field>
                <Field id={`${cid}-value`} label="Value" className="grow" error={[...at(errors, `${cpath}.value`), ...at(errors, cpath)]}>
                  {(control) => <input {...control} className="mono" value={c.value} onChange={(e) => setCondition(c.key, { value: e.target.value })} />}
                </Field>
                <button
                  type="button"
                  className="secondary"
                  aria-label={`Remove condition ${j + 1} of rule ${index + 1}`}
                  onClick={() => onChange({ conditions: rule.conditions.filter((x) => x.key !== c.key) })}
                >
                  Remove
                </button>
              </div>
            );
          })}
          <FieldError id={`${id}-conditions-error`} messages={at(errors, `${path}.conditions`)} />
          <button type="button" className="secondary" onClick={() => onChange({ conditions: [...rule.conditions, newCondition()] })}>
            Add a condition
          </button>
        </fieldset>
      )}
      <PermissionPicker
        id={`${id}-permissions`}
        legend={`Permissions of rule ${index + 1}`}
        catalogue={catalogue}
        allowed={allowed}
        selected={rule.permissions}
        onChange={(permissions) => onChange({ permissions })}
        errors={at(errors, `${path}.permissions`, true)}
      />
      <FieldError id={`${id}-error`} messages={at(errors, path)} />
      <button type="button" className="secondary" onClick={onRemove}>
        Remove rule {index + 1}
      </button>
    </fieldset>
  );
}
