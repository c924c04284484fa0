import { useState } from 'react';
import { Link } from '../../../app/router';
import { useMay, useSession } from '../../../app/SessionContext';
import { ShownOnce } from '../../../components/CopyBox';
import { Page } from '../../../components/Page';
import { TableHead } from '../../../components/TableHead';
import { formatTime, TIME_ZONE } from '../../../format';
import { useApplication } from '../api/applications';
import { DeleteDialog, RegenerateDialog } from './KeyDialogs';

/** A key the service just returned (create or regenerate): held in this page's memory only, shown once. */
export interface RevealedKey {
  id: string;
  key: string;
  regenerated: boolean;
}

/** One application: its facts and rules, its key once when just made, and Edit, Regenerate key and Delete. */
export function ApplicationDetail({
  id,
  revealed,
  onRevealed,
  onDismissKey,
  onDeleted,
}: {
  id: string;
  revealed: RevealedKey | null;
  onRevealed: (key: string) => void;
  onDismissKey: () => void;
  onDeleted: (name: string) => void;
}) {
  const { application: self } = useSession();
  const may = useMay();
  const canUpdate = may('application:update');
  const canDelete = may('application:delete');
  const { data: app, error, isPending } = useApplication(id);
  const [dialog, setDialog] = useState<'regenerate' | 'delete' | null>(null);
  const isSelf = id === self.id;

  if (!app) return <Page title="Application">{isPending ? <p>Loading…</p> : <p className="error">{error?.message}</p>}</Page>;

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
        <ShownOnce
          titleId="key-title"
          title={revealed.regenerated ? 'The new key' : 'The key of this application'}
          label="API key"
          value={revealed.key}
          note="Shown this once: copy it now. The service keeps only a hash of it, so it cannot be shown again (regenerate to get another)."
          onDismiss={onDismissKey}
        />
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
        app={app}
        isSelf={isSelf}
        open={dialog === 'regenerate'}
        onClose={() => setDialog(null)}
        onDone={(key) => {
          setDialog(null);
          onRevealed(key);
        }}
      />
      <DeleteDialog app={app} isSelf={isSelf} open={dialog === 'delete'} onClose={() => setDialog(null)} onDone={() => onDeleted(app.name)} />
    </Page>
  );
}
