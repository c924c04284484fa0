import type { Permission } from '../../../api/client';
import { FieldError } from '../../../components/Field';

/** The permissions an application of the chosen type may hold, or why they could not be read. */
export interface Catalogue {
  allowed?: Permission[];
  error?: string;
}

/** Checkboxes of the permissions of the catalogue, the API's messages for the list (and each item) under them. */
export function PermissionPicker({
  id,
  legend,
  catalogue,
  selected,
  onChange,
  errors,
  describe,
}: {
  id: string;
  legend: string;
  catalogue: Catalogue;
  selected: string[];
  onChange: (permissions: string[]) => void;
  errors: string[];
  describe?: boolean;
}) {
  const { allowed, error } = catalogue;
  const toggle = (name: string, on: boolean) => onChange(on ? [...selected, name] : selected.filter((p) => p !== name));
  return (
    <fieldset className="group permissions" id={id} aria-describedby={errors.length ? `${id}-error` : undefined}>
      <legend>{legend}</legend>
      {error ? (
        <p className="error">{error}</p>
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
