import { InputHTMLAttributes, ReactNode } from 'react';
import { Options } from './Field';

/** One field of a filter form: a label and its input (`input` goes onto the `<input>`). */
export function FilterInput({ id, label, ...input }: { id: string; label: ReactNode } & InputHTMLAttributes<HTMLInputElement>) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} {...input} />
    </div>
  );
}

/** A filter form's choice of one of `options`, *Any* (the empty value) first. */
export function FilterSelect({
  id,
  label,
  value,
  onChange,
  options,
}: {
  id: string;
  label: ReactNode;
  value: string;
  onChange: (e: { target: { value: string } }) => void;
  options: ReadonlyArray<{ value: string; label: string }>;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={onChange}>
        <option value="">Any</option>
        <Options options={options} />
      </select>
    </div>
  );
}

/** A filter form's buttons: `submit`, and *Clear* when `onClear` is given. */
export function FilterActions({ submit, onClear }: { submit: string; onClear?: () => void }) {
  return (
    <div className="actions">
      <button type="submit">{submit}</button>
      {onClear && (
        <button type="button" className="secondary" onClick={onClear}>
          Clear
        </button>
      )}
    </div>
  );
}
