import { FormEvent, useEffect, useState } from 'react';
import type { Application, ApplicationType } from '../../../api/client';
import { Link } from '../../../app/router';
import { Field, FieldError, Options } from '../../../components/Field';
import { FormProblem, useRefusal } from '../../../components/FormProblem';
import { Page } from '../../../components/Page';
import { RateLimitFields } from '../../../components/RateLimitFields';
import { TIME_ZONE } from '../../../format';
import { usePermissionCatalogue, useSaveApplication } from '../api/applications';
import { at, createBody, Draft, draftOf, keepingOnly, RuleDraft, shownAtField, toBody, TYPES, withNewRule } from '../api/draft';
import { PermissionPicker } from './PermissionPicker';
import { RuleEditor } from './RuleEditor';

/** Create (no `existing`) or edit an application. The API's validation messages are shown at their fields. */
export function ApplicationForm({ existing, onSaved }: { existing?: Application; onSaved: (app: Application & { key?: string }) => void }) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(existing));
  const refusal = useRefusal();
  const { errors } = refusal;
  const save = useSaveApplication(existing);
  const catalogue = usePermissionCatalogue(draft.type);
  const allowed = catalogue.data;

  // A type change keeps only the permissions the new type may hold.
  useEffect(() => {
    if (allowed) setDraft((d) => keepingOnly(d, new Set(allowed.map((p) => p.type))));
  }, [allowed]);

  const set = <K extends keyof Draft>(name: K, value: Draft[K]) => setDraft((d) => ({ ...d, [name]: value }));
  const setRule = (key: number, change: Partial<RuleDraft>) =>
    setDraft((d) => ({ ...d, rules: d.rules.map((r) => (r.key === key ? { ...r, ...change } : r)) }));

  function submit(event: FormEvent) {
    event.preventDefault();
    save.mutate(existing ? (toBody(draft) as ReturnType<typeof createBody>) : createBody(draft), { onSuccess: onSaved, onError: refusal.refused });
  }

  const busy = save.isPending;
  const catalogueState = { allowed, error: catalogue.error?.message };

  const typeInfo = TYPES.find((t) => t.value === draft.type)!;
  const title = existing ? `Edit “${existing.name}”` : 'New application';

  return (
    <Page title={title} className="application-form">
      <form className="form" onSubmit={submit} noValidate aria-label={title}>
        <FormProblem refusal={refusal} heading="Not saved:" shown={(path) => shownAtField(path, draft)} />

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
                <Options options={TYPES} />
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
          catalogue={catalogueState}
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
                catalogue={catalogueState}
                errors={errors}
                onChange={(change) => setRule(rule.key, change)}
                onRemove={() => setDraft((d) => ({ ...d, rules: d.rules.filter((r) => r.key !== rule.key) }))}
              />
            ))}
            <FieldError id="rules-error" messages={at(errors, 'rules')} />
            <button type="button" className="secondary" onClick={() => setDraft(withNewRule)}>
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
