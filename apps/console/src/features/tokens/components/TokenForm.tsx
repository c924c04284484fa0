import { FormEvent, useState } from 'react';
import { fieldsOf } from '../../../api/answer';
import { Link, navigate } from '../../../app/router';
import { ErrorAlert } from '../../../components/ErrorAlert';
import { Field, FieldError, Options } from '../../../components/Field';
import { Page } from '../../../components/Page';
import { localInputToIso, TIME_ZONE } from '../../../format';
import { CreateToken, TOKEN_TYPES, TokenType, useCreateToken } from '../api/tokens';

/** The type-aware data inputs: the name each has in the API's `data` (its error path is `data.<name>`). */
const DATA_FIELDS: Record<'card' | 'bank', Array<{ name: string; label: string; numeric?: boolean }>> = {
  card: [
    { name: 'number', label: 'Card number' },
    { name: 'expiration_month', label: 'Expiration month', numeric: true },
    { name: 'expiration_year', label: 'Expiration year', numeric: true },
    { name: 'cvc', label: 'CVC' },
  ],
  bank: [
    { name: 'routing_number', label: 'Routing number' },
    { name: 'account_number', label: 'Account number' },
  ],
};

interface MetadataRow {
  key: string;
  value: string;
}

/** The paths the form shows an error beside; any other path the API names is listed above the buttons. */
const SHOWN_BESIDE = [
  'type',
  'data',
  'containers',
  'metadata',
  'expires_at',
  ...Object.values(DATA_FIELDS)
    .flat()
    .map((f) => `data.${f.name}`),
];

/**
 * Create a token with fields that fit its type. The values typed here stay in this component's state: the form is
 * never submitted by the browser (no URL carries them), nothing is stored, and leaving the page forgets them.
 */
export function TokenForm() {
  const [type, setType] = useState<TokenType>('card');
  const [fields, setFields] = useState<Record<string, string>>({});
  const [text, setText] = useState('');
  const [containers, setContainers] = useState('');
  const [metadata, setMetadata] = useState<MetadataRow[]>([]);
  const [expires, setExpires] = useState('');
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  // The line above the buttons: the API's refusal, or the form's own check.
  const [problem, setProblem] = useState<string>();
  const create = useCreateToken();

  function dataOf(): { data: unknown } | { problem: string } {
    if (type === 'card' || type === 'bank') {
      const data: Record<string, string | number> = {};
      for (const f of DATA_FIELDS[type]) {
        const value = (fields[f.name] ?? '').trim();
        if (value) data[f.name] = f.numeric && /^\d{1,9}$/.test(value) ? Number(value) : value;
      }
      return { data };
    }
    if (type !== 'token') return { data: text.trim() };
    try {
      return { data: JSON.parse(text) as unknown };
    } catch {
      // The parser's message quotes the text: it is not shown.
      return { problem: 'Not valid JSON.' };
    }
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    const parsed = dataOf();
    if ('problem' in parsed) {
      setErrors({ data: [parsed.problem] });
      setProblem('The token was not created: correct the fields marked below.');
      return;
    }
    const body: CreateToken = { type, data: parsed.data as CreateToken['data'] };
    const list = containers
      .split(/[\s,]+/)
      .map((c) => c.trim())
      .filter(Boolean);
    if (list.length) body.containers = list;
    const rows = metadata.filter((r) => r.key.trim());
    if (rows.length) body.metadata = Object.fromEntries(rows.map((r) => [r.key.trim(), r.value]));
    if (expires) body.expires_at = localInputToIso(expires);
    setErrors({});
    setProblem(undefined);
    create.mutate(body, {
      onSuccess: (token) => navigate(`tokens/${encodeURIComponent(token.id)}`),
      onError: (error) => {
        const named = fieldsOf(error);
        setErrors(named);
        // The fields the API names (paths such as data.number: never a value), each also marked beside its input.
        const paths = Object.keys(named);
        setProblem(`${error.message}${paths.length ? ` Fields: ${paths.join(', ')}.` : ''}`);
      },
    });
  }

  const elsewhere = Object.entries(errors).filter(([path]) => !SHOWN_BESIDE.includes(path));
  const setField = (name: string) => (e: { target: { value: string } }) => setFields((f) => ({ ...f, [name]: e.target.value }));

  return (
    <Page title="New token" className="token-form">
      <form className="form" noValidate onSubmit={submit} aria-label="New token">
        <Field id="tk-type" label="Type" error={errors.type}>
          {(control) => (
            <select
              {...control}
              value={type}
              onChange={(e) => {
                setType(e.target.value as TokenType);
                setErrors({});
              }}
            >
              <Options options={TOKEN_TYPES} />
            </select>
          )}
        </Field>
        <fieldset className="group">
          <legend>Data</legend>
          <p className="hint">Encrypted at rest; shown back only as each key&apos;s access rules decide.</p>
          {type === 'card' || type === 'bank' ? (
            <div className="row">
              {DATA_FIELDS[type].map((f) => (
                <Field key={f.name} id={`tk-${f.name}`} label={f.label} error={errors[`data.${f.name}`]}>
                  {(control) => (
                    <input {...control} value={fields[f.name] ?? ''} onChange={setField(f.name)} inputMode="numeric" autoComplete="off" spellCheck={false} />
                  )}
                </Field>
              ))}
            </div>
          ) : type === 'token' ? (
            <Field id="tk-json" label="Data (JSON)" error={errors.data} hint="Any JSON value: an object, an array, a string in quotes, a number.">
              {(control) => <textarea {...control} className="mono" rows={8} value={text} onChange={(e) => setText(e.target.value)} spellCheck={false} />}
            </Field>
          ) : (
            <Field id="tk-text" label="Data" error={errors.data}>
              {(control) => <input {...control} value={text} onChange={(e) => setText(e.target.value)} autoComplete="off" spellCheck={false} />}
            </Field>
          )}
          {(type === 'card' || type === 'bank') && errors.data && <FieldError messages={errors.data} />}
        </fieldset>
        <Field id="tk-containers" label="Containers" error={errors.containers} hint="Separated by spaces, e.g. /pci/high/; empty: the type's default.">
          {(control) => <input {...control} value={containers} onChange={(e) => setContainers(e.target.value)} spellCheck={false} />}
        </Field>
        <fieldset className="group">
          <legend>Metadata</legend>
          <p className="hint">Non-sensitive and searchable: stored in plaintext. Never put the data here.</p>
          {metadata.map((row, i) => (
            <div className="row" key={i}>
              <Field id={`tk-meta-key-${i}`} label="Key">
                {(control) => (
                  <input {...control} value={row.key} onChange={(e) => setMetadata((m) => m.map((r, j) => (j === i ? { ...r, key: e.target.value } : r)))} />
                )}
              </Field>
              <Field id={`tk-meta-value-${i}`} label="Value" error={errors[`metadata.${row.key.trim()}`]}>
                {(control) => (
                  <input
                    {...control}
                    value={row.value}
                    onChange={(e) => setMetadata((m) => m.map((r, j) => (j === i ? { ...r, value: e.target.value } : r)))}
                  />
                )}
              </Field>
              <button type="button" className="secondary" onClick={() => setMetadata((m) => m.filter((_, j) => j !== i))}>
                Remove
              </button>
            </div>
          ))}
          {errors.metadata && <FieldError messages={errors.metadata} />}
          <div>
            <button type="button" className="secondary" onClick={() => setMetadata((m) => [...m, { key: '', value: '' }])}>
              Add metadata
            </button>
          </div>
        </fieldset>
        <Field id="tk-expires" label={`Expires at (${TIME_ZONE})`} error={errors.expires_at} hint="Empty: never.">
          {(control) => <input {...control} type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />}
        </Field>
        {elsewhere.length > 0 && (
          <ul className="problem" data-testid="token-form-problems">
            {elsewhere.map(([path, messages]) => (
              <li key={path}>
                <span className="mono">{path}</span>: {messages.join(' ')}
              </li>
            ))}
          </ul>
        )}
        <ErrorAlert message={problem} />
        <div className="actions">
          <button type="submit" disabled={create.isPending}>
            {create.isPending ? 'Creating…' : 'Create token'}
          </button>
          <Link className="button secondary" to="tokens">
            Cancel
          </Link>
        </div>
      </form>
    </Page>
  );
}
