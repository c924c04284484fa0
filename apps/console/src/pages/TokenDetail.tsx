import { useEffect, useState } from 'react';
import { Api, problemText } from '../api/client';
import { ConfirmDialog } from '../components/Dialog';
import { ErrorAlert } from '../components/ErrorAlert';
import { Page } from '../components/Page';
import { Link, navigate } from '../components/router';
import { useAction } from '../components/useAction';
import { formatTime, TIME_ZONE } from '../format';
import { deleteToken, metadataText, Token, typeLabel } from './TokensApi';

/**
 * One token as the signed-in key may see it: its data exactly as the API returned it (revealed, masked, or no `data`
 * member at all: redacted). Held in this component's state only, never in storage, a URL or a log line; leaving the
 * page forgets it.
 */
export function TokenDetail({ api, id, canDelete }: { api: Api; id: string; canDelete: boolean }) {
  const [token, setToken] = useState<Token>();
  const [error, setError] = useState<string>();
  const [confirming, setConfirming] = useState(false);
  const remove = useAction();

  useEffect(() => {
    let live = true;
    api
      .GET('/tokens/{id}', { params: { path: { id } } })
      .then(({ data, error: problem, response }) => {
        if (!live) return;
        if (data) setToken(data);
        else setError(problemText(problem, response));
      })
      .catch(() => live && setError('The service could not be reached.'));
    return () => {
      live = false;
    };
  }, [api, id]);

  function confirmDelete() {
    void remove.run(async () => {
      const { response, error: problem } = await deleteToken(api, id);
      if (response.status === 204) {
        setConfirming(false);
        navigate('tokens');
      } else remove.setError(problemText(problem, response));
    });
  }

  if (!token) {
    return (
      <Page title="Token">
        {error ? <ErrorAlert message={error} /> : <p aria-busy="true">Loading…</p>}
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
        busy={remove.busy}
        error={remove.error}
        onConfirm={confirmDelete}
        onCancel={() => {
          setConfirming(false);
          remove.setError(undefined);
        }}
      >
        <p>
          Token <span className="mono">{token.id}</span> and its data are deleted for good; whatever still refers to it stops working.
        </p>
      </ConfirmDialog>
    </Page>
  );
}
