import { useState } from 'react';
import { usePagedList } from '../../../api/paging';
import { ShownOnce } from '../../../components/CopyBox';
import { ConfirmDialog } from '../../../components/Dialog';
import { ErrorAlert } from '../../../components/ErrorAlert';
import { PagedTable } from '../../../components/ListStatus';
import { NewLink, Page } from '../../../components/Page';
import { formatTime, TIME_ZONE } from '../../../format';
import { useDeleteStream, useStreamAction, useStreamList } from '../api/streams';
import { destinationOf, LogStream } from '../api/stream-form';

/** A new https stream's signing secret, as the create answered it: shown once. */
export interface RevealedSecret {
  name: string;
  secret: string;
}

/** The tenant's log streams with their state, lag and last sync; pause, resume and delete. */
export function StreamList({
  revealed,
  onDismissSecret,
  notice,
  onNotice,
}: {
  revealed: RevealedSecret | null;
  onDismissSecret: () => void;
  notice: string;
  onNotice: (notice: string) => void;
}) {
  const action = useStreamAction();
  const remove = useDeleteStream();
  const [deleting, setDeleting] = useState<LogStream | null>(null);
  const [failure, setFailure] = useState<string | undefined>();

  function toggle(stream: LogStream) {
    setFailure(undefined);
    const verb = stream.state === 'paused' ? 'resume' : 'pause';
    action.mutate(
      { id: stream.id, action: verb },
      { onSuccess: (s) => onNotice(`Log stream “${s.name}” ${verb === 'pause' ? 'paused' : 'resumed'}.`), onError: (e) => setFailure(e.message) },
    );
  }

  function confirmDelete() {
    if (!deleting) return;
    const { id, name } = deleting;
    remove.mutate(id, {
      onSuccess: () => {
        setDeleting(null);
        onNotice(`Log stream “${name}” deleted: nothing more is sent to it.`);
      },
    });
  }

  return (
    <Page title="Log streams" className="streams" actions={<NewLink to="streams/new">New log stream</NewLink>}>
      <p className="hint">The audit trail delivered to your SIEM, at least once and in chain order; each record carries its position and hash.</p>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      {revealed && (
        <ShownOnce
          titleId="secret-title"
          title={`The signing secret of ${revealed.name}`}
          label="Signing secret (Standard Webhooks)"
          value={revealed.secret}
          note="Shown this once: copy it now into the receiver, which verifies each delivery's webhook-signature with it. The service never returns it again."
          onDismiss={onDismissSecret}
        />
      )}
      <ErrorAlert message={failure} />
      <PagedTable
        list={usePagedList(useStreamList())}
        caption="Log streams"
        columns={['Name', 'Kind', 'Destination', 'State', 'Lag', `Last sync (${TIME_ZONE})`, 'Actions']}
        row={(s) => (
          <tr key={s.id} data-stream-id={s.id}>
            <td>{s.name}</td>
            <td>{s.kind}</td>
            <td className="mono">{destinationOf(s)}</td>
            <td data-testid="stream-state">
              <span className={`state state-${s.state}`}>{s.state}</span>
              {s.state === 'failing' && s.last_error && (
                <span className="field-error">
                  {' '}
                  {s.last_error} ({formatTime(s.last_error_at ?? undefined)})
                </span>
              )}
            </td>
            <td data-testid="stream-lag">{lagText(s)}</td>
            <td>{formatTime(s.last_synced_at ?? undefined, 'never')}</td>
            <td className="row-actions">
              <button
                type="button"
                className="secondary"
                onClick={() => toggle(s)}
                disabled={action.isPending}
                aria-label={`${s.state === 'paused' ? 'Resume' : 'Pause'} ${s.name}`}
              >
                {s.state === 'paused' ? 'Resume' : 'Pause'}
              </button>
              <button type="button" className="danger" onClick={() => setDeleting(s)} aria-label={`Delete ${s.name}`}>
                Delete
              </button>
            </td>
          </tr>
        )}
        testId="streams-status"
        empty="No log streams yet."
        shown={(n, more) => (more ? `${n} log streams shown; more exist.` : `${n} log streams.`)}
        moreClassName="secondary"
      />
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete the log stream ${deleting?.name ?? ''}?`}
        confirmLabel="Delete"
        danger
        busy={remove.isPending}
        error={remove.error?.message}
        onConfirm={confirmDelete}
        onCancel={() => {
          remove.reset();
          setDeleting(null);
        }}
      >
        <p>Nothing more is sent to {deleting ? destinationOf(deleting) : 'its destination'}. The logs themselves stay. This cannot be undone.</p>
      </ConfirmDialog>
    </Page>
  );
}

/** How far behind the chain head a stream is: logs not yet acknowledged, and the age of the oldest. */
function lagText(stream: LogStream): string {
  const { logs, seconds } = stream.lag;
  if (logs === 0) return `caught up (position ${stream.position})`;
  return `${logs} ${logs === 1 ? 'log' : 'logs'}${seconds === null ? '' : `, oldest ${Math.round(seconds)} s`} (at ${stream.position} of ${stream.head_position})`;
}
