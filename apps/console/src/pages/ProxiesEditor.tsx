import { FormEvent, useEffect, useId, useRef, useState } from 'react';
import { Api, Application, fieldErrors, problemText } from '../api/client';
import { CopyBox } from '../components/CopyBox';
import { ConfirmDialog } from '../components/Dialog';
import { Page } from '../components/Page';
import { Field } from '../components/Field';
import { RateLimitFields } from '../components/RateLimitFields';
import { Link, navigate } from '../components/router';
import { CodeEditor, CodeProblem } from '../editor/CodeEditor';
import {
  compileProblem,
  configurationErrors,
  ConfigRow,
  createBody,
  EMPTY_FORM,
  formOf,
  patchBody,
  Proxy,
  ProxyForm,
  TRANSFORM_TEMPLATES,
  TransformField,
} from './ProxiesApi';
import { ProxiesTry } from './ProxiesTry';

const TRANSFORM_LABELS: Record<TransformField, string> = { request_transform: 'Request transform', response_transform: 'Response transform' };
const TRANSFORM_HINTS: Record<TransformField, string> = {
  request_transform: 'Runs before the request is sent on: req.args has body, headers, method, path and query; return { body, headers }.',
  response_transform: 'Runs on every destination response: req.args has body, headers and status; return { body, headers } (and status).',
};
/** Fields the form shows an API message next to; any other field's message goes into the summary. */
const SHOWN = new Set([
  'name',
  'destination_url',
  'require_auth',
  'application',
  'application.id',
  'request_transform',
  'request_transform.code',
  'response_transform',
  'response_transform.code',
  'rate_limit',
  'rate_limit.limit',
  'rate_limit.window_seconds',
]);

interface Props {
  api: Api;
  permissions: readonly string[];
  /** Undefined: a new proxy. */
  id?: string;
}

/** The proxy just created, handed to the page its URL opens next (a new mount), which then says "Created.". */
let created: Proxy | undefined;

type Loaded = { state: 'loading' } | { state: 'missing'; message: string } | { state: 'ready'; proxy?: Proxy };

/** /console/proxies/new and /console/proxies/<id>: the proxy form, its transforms in CodeMirror, its key, try and delete. */
export default function ProxiesEditor({ api, permissions, id }: Props) {
  const [handed] = useState(() => (id && created?.id === id ? created : undefined));
  const [loaded, setLoaded] = useState<Loaded>(handed ? { state: 'ready', proxy: handed } : id ? { state: 'loading' } : { state: 'ready' });
  const [form, setForm] = useState<ProxyForm>(handed ? formOf(handed) : EMPTY_FORM);
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [summary, setSummary] = useState<string | undefined>();
  const [status, setStatus] = useState<string | undefined>(handed ? 'Created.' : undefined);
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const canSave = permissions.includes(id ? 'proxy:update' : 'proxy:create');
  const canDelete = permissions.includes('proxy:delete');
  const canInvoke = permissions.includes('proxy:invoke');
  const applications = useSvcApplications(api, permissions.includes('application:read'));

  useEffect(() => {
    created = undefined;
    if (!id || handed) return;
    let live = true;
    api
      .GET('/proxies/{id}', { params: { path: { id } } })
      .then(({ data, error, response }) => {
        if (!live) return;
        if (data) {
          setLoaded({ state: 'ready', proxy: data });
          setForm(formOf(data));
        } else setLoaded({ state: 'missing', message: response.status === 404 || response.status === 400 ? 'There is no such proxy.' : problemText(error, response) });
      })
      .catch(() => live && setLoaded({ state: 'missing', message: 'The service could not be reached.' }));
    return () => {
      live = false;
    };
  }, [api, id, handed]);

  const proxy = loaded.state === 'ready' ? loaded.proxy : undefined;
  const rowErrors = configurationErrors(form.configuration);
  const update = <K extends keyof ProxyForm>(field: K, value: ProxyForm[K]) => setForm((f) => ({ ...f, [field]: value }));

  async function save(event: FormEvent) {
    event.preventDefault();
    setStatus(undefined);
    if (rowErrors.size > 0) {
      setSummary('The configuration has rows to fix.');
      return;
    }
    setBusy(true);
    try {
      const result = proxy
        ? await api.PATCH('/proxies/{id}', {
            params: { path: { id: proxy.id } },
            body: patchBody(form, proxy),
            headers: { 'Content-Type': 'application/merge-patch+json' },
          })
        : await api.POST('/proxies', { body: createBody(form) });
      if (result.data) {
        setErrors({});
        setSummary(undefined);
        setStatus(proxy ? 'Saved.' : 'Created.');
        setLoaded({ state: 'ready', proxy: result.data });
        setForm(formOf(result.data));
        if (!proxy) {
          created = result.data;
          navigate(`proxies/${result.data.id}`, { replace: true });
        }
      } else {
        setErrors(fieldErrors(result.error));
        setSummary(problemText(result.error, result.response));
      }
    } catch {
      setSummary('The service could not be reached.');
    } finally {
      setBusy(false);
    }
  }

  async function remove() {
    if (!proxy) return;
    setBusy(true);
    try {
      const { error, response } = await api.DELETE('/proxies/{id}', { params: { path: { id: proxy.id } } });
      if (response.ok) {
        navigate('proxies');
        return;
      }
      setSummary(problemText(error, response));
    } catch {
      setSummary('The service could not be reached.');
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  }

  if (loaded.state === 'loading') return <main className="content" aria-busy="true">Loading the proxy…</main>;
  if (loaded.state === 'missing') {
    return (
      <Page title="Proxy not found" className="proxies">
        <p role="alert">{loaded.message}</p>
        <Link to="proxies">Back to the proxies</Link>
      </Page>
    );
  }

  const fieldError = (...fields: string[]) => fields.flatMap((f) => errors[f] ?? []);
  const others = Object.entries(errors).filter(([f]) => !SHOWN.has(f) && !f.startsWith('configuration'));
  const configMessages = Object.entries(errors).filter(([f]) => f.startsWith('configuration'));

  return (
    <Page
      title={proxy ? `Proxy ${proxy.name}` : 'New proxy'}
      className="proxies"
      actions={
        proxy &&
        canDelete && (
          <button type="button" className="danger" onClick={() => setConfirming(true)}>
            Delete proxy
          </button>
        )
      }
    >
      <p className="breadcrumb">
        <Link to="proxies">Proxies</Link>
      </p>

      {/* A write by a key without proxy:read is answered without the key. */}
      {proxy?.key && (
        <div className="proxy-key">
          <CopyBox
            label="Proxy key (SVC-PROXY-KEY)"
            value={proxy.key}
            note={`Callers name the proxy with this key${proxy.require_auth ? ', and also send an API key holding proxy:invoke (require_auth is on)' : ' alone (require_auth is off)'}.`}
          />
        </div>
      )}

      <form className="proxy-form" onSubmit={save} noValidate aria-describedby={summary ? 'proxy-summary' : undefined}>
        {summary && (
          <div id="proxy-summary" className="error summary" role="alert">
            <p>{summary}</p>
            {others.length > 0 && (
              <ul>
                {others.map(([f, messages]) => (
                  <li key={f}>
                    <span className="mono">{f}</span>: {messages.join(' ')}
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
        <TextField id="proxy-name" label="Name" value={form.name} onChange={(v) => update('name', v)} errors={fieldError('name')} required />
        <TextField
          id="proxy-destination"
          label="Destination URL"
          value={form.destination_url}
          onChange={(v) => update('destination_url', v)}
          errors={fieldError('destination_url')}
          hint="Where invocations go: this URL, then the path after /proxy/, then the query string."
          required
        />
        <div className="check">
          <input id="proxy-require-auth" type="checkbox" checked={form.require_auth} onChange={(e) => update('require_auth', e.target.checked)} />
          <label htmlFor="proxy-require-auth">Invoking needs an API key with proxy:invoke too (require_auth)</label>
        </div>
        <TextField
          id="proxy-application"
          label="Application id (optional)"
          value={form.application_id}
          onChange={(v) => update('application_id', v)}
          errors={fieldError('application', 'application.id')}
          hint="A public or private application of this tenant: the transforms' svc client acts as it."
          list={applications.length > 0 ? 'proxy-application-options' : undefined}
        />
        {applications.length > 0 && (
          <datalist id="proxy-application-options">
            {applications.map((a) => (
              <option key={a.id} value={a.id} label={`${a.name} (${a.type})`} />
            ))}
          </datalist>
        )}
        <RateLimitFields
          idPrefix="proxy-rate-limit"
          draft={form.rate_limit}
          onChange={(v) => update('rate_limit', v)}
          hint="Counted per proxy, across all its callers (a require_auth call also counts against the caller's own limit). Empty: unlimited."
          messagesAt={fieldError}
        />

        {(['request_transform', 'response_transform'] as const).map((field) => (
          <TransformEditor
            key={field}
            field={field}
            value={form[field]}
            onChange={(v) => update(field, v)}
            messages={fieldError(field, `${field}.code`)}
          />
        ))}

        <ConfigurationEditor rows={form.configuration} onChange={(rows) => update('configuration', rows)} rowErrors={rowErrors} apiErrors={configMessages} />

        <div className="form-actions">
          <button type="submit" disabled={busy || !canSave}>
            {busy ? 'Saving…' : proxy ? 'Save changes' : 'Create proxy'}
          </button>
          <span role="status" className="status" data-testid="proxy-status">
            {status}
          </span>
        </div>
      </form>

      {proxy && canInvoke && <ProxiesTry api={api} proxy={proxy} />}

      <ConfirmDialog
        open={confirming}
        title={`Delete the proxy ${proxy?.name ?? ''}?`}
        confirmLabel="Delete"
        danger
        busy={busy}
        onConfirm={() => void remove()}
        onCancel={() => setConfirming(false)}
      >
        <p>Its key stops working at once for every caller. This cannot be undone.</p>
      </ConfirmDialog>
    </Page>
  );
}

function TextField(props: { id: string; label: string; value: string; onChange: (v: string) => void; errors: string[]; hint?: string; required?: boolean; list?: string }) {
  const { id, label, value, onChange, errors, hint, required, list } = props;
  return (
    <Field id={id} label={label} error={errors} hint={hint}>
      {(control) => <input {...control} value={value} onChange={(e) => onChange(e.target.value)} aria-required={required || undefined} spellCheck={false} list={list} />}
    </Field>
  );
}

/**
 * The applications a proxy's svc client may act as (public and private, the newest 100), offered as
 * suggestions for the application id when the key may read applications; none otherwise (the id is typed).
 */
function useSvcApplications(api: Api, canRead: boolean): Application[] {
  const [applications, setApplications] = useState<Application[]>([]);
  useEffect(() => {
    if (!canRead) return;
    let live = true;
    api
      .GET('/applications', { params: { query: { type: ['private', 'public'], size: 100 } } })
      .then(({ data }) => live && setApplications(data?.data ?? []))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [api, canRead]);
  return applications;
}

/** One transform: CodeMirror, with the API's compile error at its line and column and, under it, in words. */
function TransformEditor({ field, value, onChange, messages }: { field: TransformField; value: string; onChange: (v: string) => void; messages: string[] }) {
  const label = `${field}-label`;
  const errorId = `${field}-error`;
  const hintId = `${field}-hint`;
  const positioned = messages.map((m) => ({ text: m, at: compileProblem(m) }));
  const problems: CodeProblem[] = positioned.flatMap((p) => (p.at ? [p.at] : []));
  return (
    <section className="transform" aria-labelledby={label}>
      <div className="transform-heading">
        <h2 id={label}>{TRANSFORM_LABELS[field]}</h2>
        {value === '' && (
          <button type="button" className="secondary" onClick={() => onChange(TRANSFORM_TEMPLATES[field])}>
            Start from a template
          </button>
        )}
      </div>
      <p id={hintId} className="hint">
        {TRANSFORM_HINTS[field]} Empty: no transform. Tab leaves the editor.
      </p>
      <CodeEditor value={value} onChange={onChange} labelledBy={label} describedBy={`${hintId} ${errorId}`} problems={problems} />
      <div id={errorId} className="field-error" data-testid={`${field}-error`}>
        {positioned.map((p, i) => (
          <p key={i}>{p.at ? `Line ${p.at.line}, column ${p.at.column}: ${p.at.message}` : p.text}</p>
        ))}
      </div>
    </section>
  );
}

/** The configuration (string to string, req.configuration in the transforms) as rows of name and value. */
function ConfigurationEditor(props: { rows: ConfigRow[]; onChange: (rows: ConfigRow[]) => void; rowErrors: Map<number, string>; apiErrors: Array<[string, string[]]> }) {
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
                  <button type="button" className="secondary" onClick={() => onChange(rows.filter((_, j) => j !== i))} aria-label={`Remove ${row.key || `row ${i + 1}`}`}>
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
