import { ReactNode } from 'react';

export interface FieldControl {
  id: string;
  'aria-invalid': true | undefined;
  'aria-describedby': string | undefined;
}

/** A label, its control (spread `control` onto it), a hint, and the API's messages for that field under it. */
export function Field({
  id,
  label,
  error,
  hint,
  className,
  children,
}: {
  id: string;
  label: ReactNode;
  error?: string[] | string;
  hint?: ReactNode;
  className?: string;
  children: (control: FieldControl) => ReactNode;
}) {
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

/** The messages of one field (or a group of fields: a fieldset's permissions) as the API gave them. */
export function FieldError({ id, messages }: { id?: string; messages: string[] }) {
  if (messages.length === 0) return null;
  return (
    <span id={id} className="field-error">
      {messages.join(' ')}
    </span>
  );
}
