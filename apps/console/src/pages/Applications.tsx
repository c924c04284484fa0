import { useCallback, useEffect, useRef, useState } from 'react';
import { Api, Application, fieldErrors, problemText } from '../api/client';
import { CopyBox } from '../components/CopyBox';
import { ConfirmDialog } from '../components/Dialog';
import { Field } from '../components/Field';
import { ListStatus, Paging } from '../components/ListStatus';
import { Page } from '../components/Page';
import { TableHead } from '../components/TableHead';
import { Link, navigate } from '../components/router';
import { useAction } from '../components/useAction';
import { formatTime, TIME_ZONE } from '../format';
import { ApplicationForm } from './ApplicationForm';

const PAGE_SIZE = 20;

/** A key the service just returned (create or regenerate): held in this page's memory only, shown once. */
interface RevealedKey {
  id: string;
  key: string;
  regenerated: boolean;
}

/**
 * /console/applications: the list (`''`), a new one (`'/new'`), one application (`'/<id>'`) and its edit form
 * (`'/<id>/edit'`). `application` is the signed-in key's own application: what it holds decides the actions shown.
 */
export function ApplicationsPage({
  api,
  application,
  path,
  onSelfChanged,
}: {
  api: Api;
  application: Application;
  path: string;
  /** The signed-in key's own application was edited: what the console shows follows its new permissions. */
  onSelfChanged?: (app: Application) => void;
}) {
  const [revealed, setRevealed] = useState<RevealedKey | null>(null);
  const [notice, setNotice] = useState('');
  const may = (permission: string) => application.permissions.includes(permission);

  // The key is shown on its application's page only: moving to another page forgets it for good (and the notice
  // of a deletion is for the list it leads to).
  const shownAt = useRef(path);
  useEffect(() => {
    if (shownAt.current === path) return;
    shownAt.current = path;
    setRevealed((r) => (r && path !== `/${r.id}` ? null : r));
    if (path !== '') setNotice('');
  }, [path]);

  const [, id, action] = path.split('/');
  if (!id) return <ApplicationList api={api} canCreate={may('application:create')} notice={notice} />;
  if (id === 'new') {
    return may('application:create') ? (
      <ApplicationForm
        api={api}
        onSaved={(created) => {
          navigate(`applications/${created.id}`);
          if (created.key) setRevealed({ id: created.id, key: created.key, regenerated: false });
        }}
      />
    ) : (
      <Page title="New application">
        <p>This key may not create applications: it lacks application:create.</p>
      </Page>
    );
  }
  if (action === 'edit') {
    return (
      <EditApplication
        api={api}
        id={id}
        onSaved={(saved) => {
          if (saved.id === application.id) onSelfChanged?.(saved);
          navigate(`applications/${id}`);
        }}
      />
    );
  }
  if (action !== undefined) return <Page title="Page not found" />;
  return (
    <ApplicationDetail
      api={api}
      id={id}
      self={application}
      canUpdate={may('application:update')}
      canDelete={may('application:delete')}
      revealed={revealed?.id === id ? revealed : null}
      onRevealed={(key) => setRevealed({ id, key, regenerated: true })}
      onDismissKey={() => setRevealed(null)}
      onDeleted={(name) => {
        navigate('applications');
        setNotice(`Application “${name}” deleted: its key no longer works.`);
      }}
    />
  );
}

interface Listing extends Paging {
  apps: Application[];
}

function ApplicationList({ api, canCreate, notice }: { api: Api; canCreate: boolean; notice: string }) {
  const [listing, setListing] = useState<Listing>({ apps: [], loading: true });

  const load = useCallback(
    async (start?: string) => {
      setListing((l) => ({ ...l, loading: true, error: undefined }));
      try {
        const { data, error, response } = await api.GET('/applications', { params: { query: { size: PAGE_SIZE, ...(start ? { start } : {}) } } });
        if (!data) setListing((l) => ({ ...l, loading: false, error: problemText(error, response) }));
        else setListing((l) => ({ apps: start ? [...l.apps, ...data.data] : data.data, next: data.pagination.next, loading: false }));
      } catch {
        setListing((l) => ({ ...l, loading: false, error: 'The service could not be reached.' }));
      }
    },
    [api],
  );

  useEffect(() => {
    void load();
  }, [load]);

  return (
    <Page
      title="Applications"
      actions={
        canCreate && (
          <Link to="applications/new" className="button">
            New application
          </Link>
        )
      }
    >
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <table>
        <caption className="visually-hidden">Applications, newest first</caption>
        <TableHead columns={['Name', 'Type', 'Permissions', 'Rules', `Created (${TIME_ZONE})`, 'Last used']} />
        <tbody>
          {listing.apps.map((app) => (
            <tr key={app.id} data-application-id={app.id}>
              <td>
                <Link to={`applications/${app.id}`}>{app.name}</Link>
              </td>
              <td>{app.type}</td>
              <td>{app.permissions.join(', ')}</td>
              <td>{app.rules.length}</td>
              <td>{formatTime(app.created_at)}</td>
              <td>{formatTime(app.last_used_at, 'never')}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <ListStatus
        paging={listing}
        count={listing.apps.length}
        testId="applications-status"
        empty="No applications."
        shown={(n, more) => (more ? `${n} applications shown; more exist.` : `${n} applications shown: all of them.`)}
        onMore={() => void load(listing.next)}
        moreClassName="secondary"
      />
    </Page>
  );
}

/** One application by id: `undefined` while loading, or the reason it could not be read. */
function useApplication(api: Api, id: string) {
  const [state, setState] = useState<{ app?: Application; error?: string; loading: boolean }>({ loading: true });
  useEffect(() => {
    let live = true;
    setState({ loading: true });
    api
      .GET('/applications/{id}', { params: { path: { id } } })
      .then(({ data, error, response }) => {
        if (!live) return;
        if (data) setState({ app: data, loading: false });
        else setState({ loading: false, error: response.status === 404 ? 'No such application in this tenant.' : problemText(error, response) });
      })
      .catch(() => live && setState({ loading: false, error: 'The service could not be reached.' }));
    return () => {
      live = false;
    };
  }, [api, id]);
  return [state, (app: Application) => setState({ app, loading: false })] as const;
}

function EditApplication({ api, id, onSaved }: { api: Api; id: string; onSaved: (app: Application) => void }) {
  const [{ app, error, loading }] = useApplication(api, id);
  if (!app) return <Page title="Edit application">{loading ? <p>Loading…</p> : <p className="error">{error}</p>}</Page>;
  return <ApplicationForm api={api} existing={app} onSaved={onSaved} />;
}

function ApplicationDetail({
  api,
  id,
  self,
  canUpdate,
  canDelete,
  revealed,
  onRevealed,
  onDismissKey,
  onDeleted,
}: {
  api: Api;
  id: string;
  self: Application;
  canUpdate: boolean;
  canDelete: boolean;
  revealed: RevealedKey | null;
  onRevealed: (key: string) => void;
  onDismissKey: () => void;
  onDeleted: (name: string) => void;
}) {
  const [{ app, error, loading }, setApp] = useApplication(api, id);
  const [dialog, setDialog] = useState<'regenerate' | 'delete' | null>(null);
  const keyHeading = useRef<HTMLHeadingElement>(null);
  const isSelf = id === self.id;

  const loaded = app !== undefined;
  useEffect(() => {
    if (revealed && loaded) keyHeading.current?.focus();
  }, [revealed, loaded]);

  if (!app) return <Page title="Application">{loading ? <p>Loading…</p> : <p className="error">{error}</p>}</Page>;

  const facts: Array<[string, string | undefined]> = [
    ['Id', app.id],
    ['Type', app.type],
    ['Permissions', app.permissions.join(', ') || 'none'],
    ['Rate limit', app.rate_limit ? `${app.rate_limit.limit} requests per ${app.rate_limit.window_seconds} s` : "the tenant's default"],
    ['May create expiring applications', app.type === 'private' ? (app.can_create_expiring_applications ? 'yes' : 'no') : undefined],
    [`Created (${TIME_ZONE})`, formatTime(app.created_at)],
    [`Modified (${TIME_ZONE})`, formatTime(app.modified_at)],
    [`Expires (${TIME_ZONE})`, formatTime(app.expires_at)],
    [`Last used (${TIME_ZONE})`, formatTime(app.last_used_at, 'never')],
    [`Previous key works until (${TIME_ZONE})`, formatTime(app.previous_key_expires_at)],
  ];

  return (
    <Page
      title={app.name}
      className="application"
      actions={
        <>
          {canUpdate && (
            <Link to={`applications/${id}/edit`} className="button secondary">
              Edit
            </Link>
          )}
          {(canUpdate || isSelf) && (
            <button type="button" className="secondary" onClick={() => setDialog('regenerate')}>
              Regenerate key
            </button>
          )}
          {canDelete && (
            <button type="button" className="danger" onClick={() => setDialog('delete')}>
              Delete
            </button>
          )}
        </>
      }
    >
      <p>
        <Link to="applications">All applications</Link>
      </p>
      {revealed && (
        <section className="card key-card" aria-labelledby="key-title">
          <h2 id="key-title" tabIndex={-1} ref={keyHeading}>
            {revealed.regenerated ? 'The new key' : 'The key of this application'}
          </h2>
          <CopyBox
            label="API key"
            value={revealed.key}
            note="Shown this once: copy it now. The service keeps only a hash of it, so it cannot be shown again (regenerate to get another)."
          />
          <button type="button" className="secondary" onClick={onDismissKey}>
            I have copied it
          </button>
        </section>
      )}
      <dl className="facts">
        {facts
          .filter(([, v]) => v)
          .map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </div>
          ))}
      </dl>
      <h2>Access rules</h2>
      {app.rules.length === 0 ? (
        <p>No rules.</p>
      ) : (
        <table>
          <TableHead columns={['Priority', 'Transform', 'Permissions', 'Scope', 'Description']} />
          <tbody>
            {[...app.rules]
              .sort((a, b) => a.priority - b.priority)
              .map((rule) => (
                <tr key={rule.priority}>
                  <td>{rule.priority}</td>
                  <td>{rule.transform}</td>
                  <td>{rule.permissions.join(', ')}</td>
                  <td className="mono">
                    {rule.container ?? (rule.conditions ?? []).map((c) => `${c.attribute} ${c.operator.replace('_', ' ')} ${c.value}`).join('; ')}
                  </td>
                  <td>{rule.description}</td>
                </tr>
              ))}
          </tbody>
        </table>
      )}
      <RegenerateDialog
        api={api}
        app={app}
        isSelf={isSelf}
        open={dialog === 'regenerate'}
        onClose={() => setDialog(null)}
        onDone={(updated, key) => {
          setDialog(null);
          setApp(updated);
          onRevealed(key);
        }}
      />
      <DeleteDialog api={api} app={app} isSelf={isSelf} open={dialog === 'delete'} onClose={() => setDialog(null)} onDone={() => onDeleted(app.name)} />
    </Page>
  );
}

function RegenerateDialog({
  api,
  app,
  isSelf,
  open,
  onClose,
  onDone,
}: {
  api: Api;
  app: Application;
  isSelf: boolean;
  open: boolean;
  onClose: () => void;
  onDone: (app: Application, key: string) => void;
}) {
  const [overlap, setOverlap] = useState('');
  const [fieldError, setFieldError] = useState<string[]>();
  const { busy, error, setError, run } = useAction();

  useEffect(() => {
    if (!open) {
      setOverlap('');
      setError(undefined);
      setFieldError(undefined);
    }
  }, [open, setError]);

  const regenerate = () =>
    run(async () => {
      setFieldError(undefined);
      const seconds = overlap.trim() === '' ? undefined : Number(overlap);
      const { data, error: problem, response } = await api.POST('/applications/{id}/regenerate', {
        params: { path: { id: app.id } },
        body: seconds === undefined ? {} : { previous_key_expires_in_seconds: seconds },
      });
      if (data?.key) {
        const { key, ...rest } = data;
        onDone(rest, key);
      } else {
        const atField = fieldErrors(problem).previous_key_expires_in_seconds;
        if (atField) setFieldError(atField);
        else setError(problemText(problem, response));
      }
    });

  return (
    <ConfirmDialog open={open} title={`Regenerate the key of “${app.name}”?`} confirmLabel="Regenerate" busy={busy} error={error} onConfirm={() => void regenerate()} onCancel={onClose}>
      <p>A new key is made and shown once. The current key stops working at once, unless you keep it working a while below.</p>
      {isSelf && (
        <p className="warning">
          This is the key you are signed in with: once it stops working, sign in again with the new one.
        </p>
      )}
      <Field
        id="previous-key-expires"
        label="Keep the current key working for (seconds, optional)"
        hint="0 to 86400; empty or 0: it stops at once."
        error={fieldError}
      >
        {(control) => <input {...control} type="number" inputMode="numeric" min={0} max={86400} step={1} value={overlap} onChange={(e) => setOverlap(e.target.value)} />}
      </Field>
    </ConfirmDialog>
  );
}

function DeleteDialog({ api, app, isSelf, open, onClose, onDone }: { api: Api; app: Application; isSelf: boolean; open: boolean; onClose: () => void; onDone: () => void }) {
  const { busy, error, setError, run } = useAction();

  useEffect(() => {
    if (!open) setError(undefined);
  }, [open, setError]);

  const remove = () =>
    run(async () => {
      const { error: problem, response } = await api.DELETE('/applications/{id}', { params: { path: { id: app.id } } });
      if (response.ok) onDone();
      else setError(problemText(problem, response));
    });

  return (
    <ConfirmDialog open={open} title={`Delete “${app.name}”?`} confirmLabel="Delete" danger busy={busy} error={error} onConfirm={() => void remove()} onCancel={onClose}>
      <p>Its key stops working at once, on every replica. This cannot be undone.</p>
      {isSelf && <p className="warning">This is the application you are signed in with: the console signs you out.</p>}
    </ConfirmDialog>
  );
}
