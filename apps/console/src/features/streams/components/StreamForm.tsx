import { FormEvent, useState } from 'react';
import { Link } from '../../../app/router';
import { Field, Options } from '../../../components/Field';
import { FormProblem, useRefusal } from '../../../components/FormProblem';
import { Page } from '../../../components/Page';
import { useCreateStream } from '../api/streams';
import { CreatedLogStream, EMPTY_DRAFT, KIND_FIELDS, KIND_LABELS, SettingField, shownPaths, STREAM_KINDS, StreamDraft, StreamKind } from '../api/stream-form';

/** A new log stream: its name, kind and start, and the kind's settings. The API's messages are shown at their fields. */
export function StreamForm({ onCreated }: { onCreated: (created: CreatedLogStream) => void }) {
  const [draft, setDraft] = useState<StreamDraft>(EMPTY_DRAFT);
  const refusal = useRefusal();
  const { errors } = refusal;
  const create = useCreateStream();

  const set = <K extends keyof StreamDraft>(name: K, value: StreamDraft[K]) => setDraft((d) => ({ ...d, [name]: value }));
  const setSetting = (name: string, value: string | boolean) =>
    setDraft((d) => ({ ...d, settings: { ...d.settings, [d.kind]: { ...d.settings[d.kind], [name]: value } } }));

  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate(draft, { onSuccess: onCreated, onError: refusal.refused });
  }

  const shown = shownPaths(draft.kind);
  const values = draft.settings[draft.kind];

  return (
    <Page title="New log stream" className="stream-form">
      <p>
        <Link to="streams">All log streams</Link>
      </p>
      <form className="form" onSubmit={submit} noValidate aria-label="New log stream">
        <FormProblem refusal={refusal} heading="Not created:" shown={(path) => shown.has(path)} />

        <Field id="stream-name" label="Name" error={errors.name}>
          {(control) => <input {...control} value={draft.name} maxLength={200} onChange={(e) => set('name', e.target.value)} autoFocus />}
        </Field>
        <Field id="stream-kind" label="Kind" error={errors.kind}>
          {(control) => (
            <select {...control} value={draft.kind} onChange={(e) => set('kind', e.target.value as StreamKind)}>
              <Options options={STREAM_KINDS.map((k) => ({ value: k, label: KIND_LABELS[k] }))} />
            </select>
          )}
        </Field>
        <Field id="stream-start" label="Start from" error={errors.start}>
          {(control) => (
            <select {...control} value={draft.start} onChange={(e) => set('start', e.target.value as StreamDraft['start'])}>
              <option value="now">The tenant's next log</option>
              <option value="beginning">The beginning of the trail (position 1)</option>
            </select>
          )}
        </Field>

        <fieldset className="group">
          <legend>Settings of {KIND_LABELS[draft.kind]}</legend>
          {KIND_FIELDS[draft.kind].map((field) => (
            <SettingInput
              key={`${draft.kind}.${field.name}`}
              id={`stream-${draft.kind}-${field.name}`}
              field={field}
              value={values[field.name]}
              onChange={(v) => setSetting(field.name, v)}
              errors={errors[`settings.${field.name}`]}
            />
          ))}
        </fieldset>
        {errors.settings && <p className="field-error">{errors.settings.join(' ')}</p>}

        <div className="actions">
          <button type="submit" disabled={create.isPending}>
            {create.isPending ? 'Creating…' : 'Create log stream'}
          </button>
        </div>
      </form>
    </Page>
  );
}

/** One setting of the chosen kind: a text, number, write-only secret, PEM text or checkbox, the API's messages under it. */
function SettingInput(props: {
  id: string;
  field: SettingField;
  value: string | boolean | undefined;
  onChange: (v: string | boolean) => void;
  errors?: string[];
}) {
  const { id, field, value, onChange, errors } = props;
  const label = field.required ? field.label : field.type === 'checkbox' || field.type === 'pem' ? field.label : `${field.label} (optional)`;
  if (field.type === 'checkbox') {
    return (
      <div className="check">
        <input
          id={id}
          type="checkbox"
          checked={value === true}
          onChange={(e) => onChange(e.target.checked)}
          aria-invalid={errors?.length ? true : undefined}
          aria-describedby={errors?.length ? `${id}-error` : undefined}
        />
        <label htmlFor={id}>{label}</label>
        {errors?.length ? (
          <span id={`${id}-error`} className="field-error">
            {errors.join(' ')}
          </span>
        ) : null}
      </div>
    );
  }
  const text = typeof value === 'string' ? value : '';
  return (
    <Field id={id} label={label} hint={field.hint} error={errors}>
      {(control) =>
        field.type === 'pem' ? (
          <textarea
            {...control}
            className="mono"
            rows={4}
            value={text}
            onChange={(e) => onChange(e.target.value)}
            spellCheck={false}
            placeholder="-----BEGIN CERTIFICATE-----"
          />
        ) : (
          <input
            {...control}
            type={field.type === 'secret' ? 'password' : field.type === 'number' ? 'number' : 'text'}
            inputMode={field.type === 'number' ? 'numeric' : undefined}
            autoComplete={field.type === 'secret' ? 'new-password' : 'off'}
            value={text}
            onChange={(e) => onChange(e.target.value)}
            placeholder={field.placeholder}
            aria-required={field.required || undefined}
            spellCheck={false}
          />
        )
      }
    </Field>
  );
}
