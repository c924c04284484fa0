import { useState } from 'react';
import { messageOf } from '../../../api/answer';
import { Link, navigate } from '../../../app/router';
import { ConfirmDialog } from '../../../components/Dialog';
import { ErrorAlert } from '../../../components/ErrorAlert';
import { Page } from '../../../components/Page';
import { formatTime, TIME_ZONE } from '../../../format';
import { metadataText, typeLabel, useDeleteToken, useToken } from '../api/tokens';

/**
 * One token as the signed-in key may see it: its data exactly as the API returned it (revealed, masked, or no `data`
 * member at all: redacted). Held in the query cache while this page shows it only (`gcTime: 0`), never in storage, a
 * URL or a log line; leaving the page forgets it.
 */
export function TokenDetail({ id, canDelete }: { id: string; canDelete: boolean }) {
  const { data: token, error } = useToken(id);
  const [confirming, setConfirming] = useState(false);
  const remove = useDeleteToken(id);

  function confirmDelete() {
    remove.mutate(undefined, {
      onSuccess: () => {
        setConfirming(false);
        navigate('tokens');
      },
    });
  }

  if (!token) {
    return (
      <Page title="Token">
        {error ? <ErrorAlert message={error.message} /> : <p aria-busy="true">Loading…</p>}
        <p>
          <Link to="tokens">Back to the tokens</Link>
        </p>
      </Page>
    );
  }

  const facts: Array<[string, string | undefined]> = [
    ['Id', token.id],
    ['Type', typeLabel(token.type)],
    ['Containers', token.containers.join(' ')],
    ['Metadata', metadataText(token.metadata) || 'none'],
    ['Fingerprint', token.fingerprint ?? 'none'],
    ['Fingerprint expression', token.fingerprint_expression],
    ['Mask expression', token.mask === undefined || token.mask === null ? 'none' : JSON.stringify(token.mask)],
    [`Created (${TIME_ZONE})`, formatTime(token.created_at)],
    ['Created by', token.created_by],
    [`Modified (${TIME_ZONE})`, formatTime(token.modified_at)],
    ['Modified by', token.modified_by],
    [`Expires (${TIME_ZONE})`, formatTime(token.expires_at, 'never')],
  ];

  return (
    <Page
      title={`Token ${token.id}`}
      className="token"
      actions={
        <>
          <Link className="button secondary" to="tokens">
            All tokens
          </Link>
          {canDelete && (
            <button type="button" className="danger" onClick={() => setConfirming(true)}>
              Delete token
            </button>
          )}
        </>
      }
    >
      <section className="card" aria-labelledby="token-data-title">
        <h2 id="token-data-title">Data</h2>
        {'data' in token ? (
          <>
            <p className="hint">As this key&apos;s access rule returns it: the value itself (reveal) or its mask (mask).</p>
            <pre className="mono token-data" data-testid="token-data">
              {JSON.stringify(token.data, null, 2)}
            </pre>
          </>
        ) : (
          <p data-testid="token-data">Redacted: this key&apos;s access rule returns no data for this token.</p>
        )}
      </section>
      <dl className="facts">
        {facts
          .filter(([, v]) => v !== undefined && v !== '')
          .map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd className="mono">{v}</dd>
            </div>
          ))}
      </dl>
      <ConfirmDialog
        open={confirming}
        title="Delete this token?"
        confirmLabel="Delete token"
        danger
        busy={remove.isPending}
        error={messageOf(remove.error)}
        onConfirm={confirmDelete}
        onCancel={() => {
          setConfirming(false);
          remove.reset();
        }}
      >
        <p>
          Token <span className="mono">{token.id}</span> and its data are deleted for good; whatever still refers to it stops working.
        </p>
      </ConfirmDialog>
    </Page>
  );
}
