import { ReactNode } from 'react';

export interface FieldControl {
  id: string;
  'aria-invalid': true | undefined;
  'aria-describedby': string | undefined;
}

interface FieldProps {
  id: string;
  label: ReactNode;
  error?: string[] | string;
  hint?: ReactNode;
  className?: string;
  children: (control: FieldControl) => ReactNode;
}

/** A label, its control (spread `control` onto it), a hint, and the API's messages for that field under it. */
export function Field({ id, label, error, hint, className, children }: FieldProps) {
  const messages = error === undefined ? [] : Array.isArray(error) ? error : [error];
  const described = [hint ? `${id}-hint` : '', messages.length ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div className={className ? `field ${className}` : 'field'}>
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-invalid': messages.length ? true : undefined, 'aria-describedby': described || undefined })}
      {hint && (
        <span id={`${id}-hint`} className="hint">
          {hint}
        </span>
      )}
      {messages.length > 0 && <FieldError id={`${id}-error`} messages={messages} />}
    </div>
  );
}

/** A whole number's field, its text as typed (the API judges it): at least `min` (1 unless told), at most `max`. */
export function NumberField({
  value,
  onChange,
  min = 1,
  max,
  ...field
}: Omit<FieldProps, 'children'> & { value: string; onChange: (text: string) => void; min?: number; max?: number }) {
  return (
    <Field {...field}>
      {(control) => (
        <input {...control} type="number" inputMode="numeric" min={min} max={max} step={1} value={value} onChange={(e) => onChange(e.target.value)} />
      )}
    </Field>
  );
}

/** A select's `<option>`s: one a value, showing its label. */
export function Options({ options }: { options: ReadonlyArray<{ value: string; label: string }> }) {
  return (
    <>
      {options.map((o) => (
        <option key={o.value} value={o.value}>
          {o.label}
        </option>
      ))}
    </>
  );
}

/** The messages of one field (or a group of fields: a fieldset's permissions) as the API gave them. */
export function FieldError({ id, messages }: { id?: string; messages: string[] }) {
  if (messages.length === 0) return null;
  return (
    <span id={id} className="field-error">
      {messages.join(' ')}
    </span>
  );
}
