import { FormEvent, useState } from 'react';
import { ErrorAlert } from '../../../components/ErrorAlert';
import { useTryProxy } from '../api/proxies';
import type { Proxy } from '../api/proxy-form';
import { Method, METHODS } from '../api/try-proxy';

/** "Try the proxy": one request through /proxy/... with this proxy's key, and the response as it came back. */
export function ProxiesTry({ proxy }: { proxy: Proxy }) {
  const [method, setMethod] = useState<Method>('GET');
  const [path, setPath] = useState('');
  const [query, setQuery] = useState('');
  const [contentType, setContentType] = useState('application/json');
  const [body, setBody] = useState('');
  const [sendApiKey, setSendApiKey] = useState(proxy.require_auth);
  const send = useTryProxy();
  const busy = send.isPending;
  const result = send.data;
  const error = send.isError ? 'The request could not be sent.' : undefined;

  function submit(event: FormEvent) {
    event.preventDefault();
    send.mutate({ proxyKey: proxy.key ?? '', method, path, query, contentType, body, sendApiKey });
  }

  const target = `/proxy${path ? `/${path.replace(/^\/+/, '')}` : ''}${query ? `?${query.replace(/^\?/, '')}` : ''}`;
  return (
    <section className="try" aria-labelledby="try-title">
      <h2 id="try-title">Try the proxy</h2>
      <p className="hint">
        Sends a request to <span className="mono">{target}</span> with this proxy&apos;s key, through its transforms to {proxy.destination_url} (the saved
        proxy, not unsaved edits).
      </p>
      <form className="try-form" onSubmit={submit}>
        <div className="field">
          <label htmlFor="try-method">Method</label>
          <select id="try-method" value={method} onChange={(e) => setMethod(e.target.value as Method)}>
            {METHODS.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </div>
        <div className="field grow">
          <label htmlFor="try-path">Path after /proxy/</label>
          <input id="try-path" value={path} onChange={(e) => setPath(e.target.value)} placeholder="orders/42" spellCheck={false} />
        </div>
        <div className="field grow">
          <label htmlFor="try-query">Query string</label>
          <input id="try-query" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="a=1&b=2" spellCheck={false} />
        </div>
        {method !== 'GET' && (
          <>
            <div className="field">
              <label htmlFor="try-content-type">Content-Type</label>
              <input id="try-content-type" value={contentType} onChange={(e) => setContentType(e.target.value)} spellCheck={false} />
            </div>
            <div className="field wide">
              <label htmlFor="try-body">Body</label>
              <textarea id="try-body" rows={4} className="mono" value={body} onChange={(e) => setBody(e.target.value)} spellCheck={false} />
            </div>
          </>
        )}
        <div className="check wide">
          <input id="try-api-key" type="checkbox" checked={sendApiKey} onChange={(e) => setSendApiKey(e.target.checked)} />
          <label htmlFor="try-api-key">Send my API key too (SVC-API-KEY; needed while require_auth is on)</label>
        </div>
        <div className="form-actions wide">
          <button type="submit" disabled={busy}>
            {busy ? 'Sending…' : 'Send'}
          </button>
        </div>
      </form>
      <ErrorAlert message={error} />
      <div aria-live="polite">
        {result && (
          <div className="try-result" data-testid="try-result">
            <p>
              <strong data-testid="try-status">
                {result.status} {result.statusText}
              </strong>{' '}
              <span className="status">in {result.ms} ms</span>
            </p>
            <details>
              <summary>Headers ({result.headers.length})</summary>
              <dl className="headers mono">
                {result.headers.map(([name, value]) => (
                  <div key={name}>
                    <dt>{name}</dt>
                    <dd>{value}</dd>
                  </div>
                ))}
              </dl>
            </details>
            <pre className="mono body" data-testid="try-body" tabIndex={0} aria-label="Response body">
              {result.body}
            </pre>
          </div>
        )}
      </div>
    </section>
  );
}
