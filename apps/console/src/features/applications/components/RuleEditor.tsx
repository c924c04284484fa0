import type { ApplicationType } from '../../../api/client';
import { Field, FieldError, NumberField } from '../../../components/Field';
import { at, Condition, newCondition, RuleDraft, Transform } from '../api/draft';
import { Catalogue, PermissionPicker } from './PermissionPicker';

/** One access rule of the form: priority, transform, container or conditions, description, its permissions. */
export function RuleEditor({
  index,
  rule,
  type,
  catalogue,
  errors,
  onChange,
  onRemove,
}: {
  index: number;
  rule: RuleDraft;
  type: ApplicationType;
  catalogue: Catalogue;
  errors: Record<string, string[]>;
  onChange: (change: Partial<RuleDraft>) => void;
  onRemove: () => void;
}) {
  const path = `rules[${index}]`;
  const id = `rule-${rule.key}`;
  const setCondition = (key: number, change: Partial<Condition>) =>
    onChange({ conditions: rule.conditions.map((c) => (c.key === key ? { ...c, ...change } : c)) });
  return (
    <fieldset className="rule" aria-describedby={at(errors, path).length ? `${id}-error` : undefined}>
      <legend>Rule {index + 1}</legend>
      <div className="row">
        <NumberField
          id={`${id}-priority`}
          label="Priority"
          error={at(errors, `${path}.priority`)}
          value={rule.priority}
          onChange={(priority) => onChange({ priority })}
        />
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
            {(control) => (
              <input {...control} className="mono" placeholder="/pci/high/" value={rule.container} onChange={(e) => onChange({ container: e.target.value })} />
            )}
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
