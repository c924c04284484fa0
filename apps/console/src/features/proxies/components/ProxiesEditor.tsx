import { FormEvent, useEffect, useState } from 'react';
import { ApiError, fieldsOf } from '../../../api/answer';
import { Link, navigate } from '../../../app/router';
import { useMay } from '../../../app/SessionContext';
import { CopyBox } from '../../../components/CopyBox';
import { ConfirmDialog } from '../../../components/Dialog';
import { Field } from '../../../components/Field';
import { Page } from '../../../components/Page';
import { RateLimitFields } from '../../../components/RateLimitFields';
import { useSvcApplications } from '../../applications/api/applications';
import { useDeleteProxy, useProxy, useSaveProxy } from '../api/proxies';
import { configurationErrors, EMPTY_FORM, formOf, Proxy, ProxyForm } from '../api/proxy-form';
import { ConfigurationEditor } from './ConfigurationEditor';
import { ProxiesTry } from './ProxiesTry';
import { TransformEditor } from './TransformEditor';

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

/** The proxy just created, handed to the page its URL opens next (a new mount), which then says "Created.". */
let created: Proxy | undefined;

/** /console/proxies/new and /console/proxies/<id> (`id`): the proxy read, then its editor. */
export default function ProxiesEditor({ id }: { id?: string }) {
  const [handed] = useState(() => (id && created?.id === id ? created : undefined));
  useEffect(() => {
    created = undefined;
  }, []);
  const loaded = useProxy(handed ? undefined : id);

  if (id && !handed) {
    if (loaded.isPending)
      return (
        <main className="content" aria-busy="true">
          Loading the proxy…
        </main>
      );
    if (!loaded.data) {
      return (
        <Page title="Proxy not found" className="proxies">
          <p role="alert">{loaded.error?.message}</p>
          <Link to="proxies">Back to the proxies</Link>
        </Page>
      );
    }
  }
  return <ProxyEditor initial={handed ?? loaded.data} handed={handed !== undefined} />;
}

/** The proxy form, its transforms in CodeMirror, its key, try and delete; `initial` undefined: a new proxy. */
function ProxyEditor({ initial, handed }: { initial?: Proxy; handed: boolean }) {
  const may = useMay();
  // The proxy as last saved (what a PATCH is computed against), and the form editing it.
  const [proxy, setProxy] = useState(initial);
  const [form, setForm] = useState<ProxyForm>(initial ? formOf(initial) : EMPTY_FORM);
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [summary, setSummary] = useState<string | undefined>();
  const [status, setStatus] = useState<string | undefined>(handed ? 'Created.' : undefined);
  const [confirming, setConfirming] = useState(false);
  const save = useSaveProxy();
  const remove = useDeleteProxy();
  const busy = save.isPending || remove.isPending;
  const canSave = may(proxy ? 'proxy:update' : 'proxy:create');
  const canDelete = may('proxy:delete');
  const canInvoke = may('proxy:invoke');
  const applications = useSvcApplications(may('application:read'));

  const rowErrors = configurationErrors(form.configuration);
  const update = <K extends keyof ProxyForm>(field: K, value: ProxyForm[K]) => setForm((f) => ({ ...f, [field]: value }));

  function submit(event: FormEvent) {
    event.preventDefault();
    setStatus(undefined);
    if (rowErrors.size > 0) {
      setSummary('The configuration has rows to fix.');
      return;
    }
    save.mutate(
      { form, before: proxy },
      {
        onSuccess: (saved) => {
          setErrors({});
          setSummary(undefined);
          setStatus(proxy ? 'Saved.' : 'Created.');
          setProxy(saved);
          setForm(formOf(saved));
          if (!proxy) {
            created = saved;
            navigate(`proxies/${saved.id}`, { replace: true });
          }
        },
        onError: (error) => {
          // No answer at all: the messages of the last answer stay at their fields.
          if (!(error instanceof ApiError) || error.status !== undefined) setErrors(fieldsOf(error));
          setSummary(error.message);
        },
      },
    );
  }

  function confirmDelete() {
    if (!proxy) return;
    remove.mutate(proxy.id, {
      onSuccess: () => navigate('proxies'),
      onError: (error) => setSummary(error.message),
      onSettled: () => setConfirming(false),
    });
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

      <form className="proxy-form" onSubmit={submit} noValidate aria-describedby={summary ? 'proxy-summary' : undefined}>
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
          <TransformEditor key={field} field={field} value={form[field]} onChange={(v) => update(field, v)} messages={fieldError(field, `${field}.code`)} />
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

      {proxy && canInvoke && <ProxiesTry proxy={proxy} />}

      <ConfirmDialog
        open={confirming}
        title={`Delete the proxy ${proxy?.name ?? ''}?`}
        confirmLabel="Delete"
        danger
        busy={busy}
        onConfirm={confirmDelete}
        onCancel={() => setConfirming(false)}
      >
        <p>Its key stops working at once for every caller. This cannot be undone.</p>
      </ConfirmDialog>
    </Page>
  );
}

/** A one-line text field of the form, the API's messages under it. */
function TextField(props: {
  id: string;
  label: string;
  value: string;
  onChange: (v: string) => void;
  errors: string[];
  hint?: string;
  required?: boolean;
  list?: string;
}) {
  const { id, label, value, onChange, errors, hint, required, list } = props;
  return (
    <Field id={id} label={label} error={errors} hint={hint}>
      {(control) => (
        <input {...control} value={value} onChange={(e) => onChange(e.target.value)} aria-required={required || undefined} spellCheck={false} list={list} />
      )}
    </Field>
  );
}
