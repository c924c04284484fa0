import { useEffect, useId, useRef } from 'react';
import type { ConfigRow } from '../api/proxy-form';

/** The configuration (string to string, req.configuration in the transforms) as rows of name and value. */
export function ConfigurationEditor(props: {
  rows: ConfigRow[];
  onChange: (rows: ConfigRow[]) => void;
  rowErrors: Map<number, string>;
  apiErrors: Array<[string, string[]]>;
}) {
  const { rows, onChange, rowErrors, apiErrors } = props;
  const set = (i: number, row: Partial<ConfigRow>) => onChange(rows.map((r, j) => (j === i ? { ...r, ...row } : r)));
  const headingId = useId();
  const added = useRef(false);
  const lastName = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (added.current) lastName.current?.focus();
    added.current = false;
  }, [rows.length]);
  return (
    <section className="configuration" aria-labelledby={headingId}>
      <h2 id={headingId}>Configuration</h2>
      <p className="hint">Named values the transforms read as req.configuration (strings; a secret belongs here, not in the code).</p>
      {rows.length > 0 && (
        <table className="config-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Value</th>
              <th scope="col">
                <span className="visually-hidden">Remove</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row, i) => (
              <tr key={i}>
                <td>
                  <input
                    ref={i === rows.length - 1 ? lastName : undefined}
                    aria-label={`Name ${i + 1}`}
                    value={row.key}
                    onChange={(e) => set(i, { key: e.target.value })}
                    aria-invalid={rowErrors.has(i) ? true : undefined}
                    aria-describedby={rowErrors.has(i) ? `config-error-${i}` : undefined}
                    spellCheck={false}
                  />
                  {rowErrors.has(i) && (
                    <p id={`config-error-${i}`} className="field-error">
                      {rowErrors.get(i)}
                    </p>
                  )}
                </td>
                <td>
                  <input aria-label={`Value ${i + 1}`} value={row.value} onChange={(e) => set(i, { value: e.target.value })} spellCheck={false} />
                </td>
                <td>
                  <button
                    type="button"
                    className="secondary"
                    onClick={() => onChange(rows.filter((_, j) => j !== i))}
                    aria-label={`Remove ${row.key || `row ${i + 1}`}`}
                  >
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {apiErrors.map(([f, messages]) => (
        <p key={f} className="field-error">
          <span className="mono">{f}</span>: {messages.join(' ')}
        </p>
      ))}
      <button
        type="button"
        className="secondary"
        onClick={() => {
          added.current = true;
          onChange([...rows, { key: '', value: '' }]);
        }}
      >
        Add a value
      </button>
    </section>
  );
}
