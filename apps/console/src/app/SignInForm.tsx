import { FormEvent, useState } from 'react';
import { ErrorAlert } from '../components/ErrorAlert';
import { resolveKey, Session } from './session';

/** Paste an API key: it is checked (GET /applications/key) before the console opens. */
export function SignInForm({ error, onRefused, onSignedIn }: { error?: string; onRefused: () => void; onSignedIn: (key: string, session: Session) => void }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState(error);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const trimmed = key.trim();
    if (!trimmed) {
      setMessage('Paste an API key.');
      return;
    }
    setBusy(true);
    const result = await resolveKey(trimmed, onRefused);
    setBusy(false);
    if ('session' in result) onSignedIn(trimmed, result.session);
    else setMessage(result.error);
  }

  return (
    <main className="centered">
      <form className="sign-in" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Gatehouse console</h1>
        <p>Sign in with an API key. It is kept in this tab only and forgotten when you sign out or close the tab.</p>
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={key}
          onChange={(e) => setKey(e.target.value)}
          aria-invalid={message ? true : undefined}
          aria-describedby={message ? 'sign-in-error' : undefined}
          autoFocus
        />
        <ErrorAlert id="sign-in-error" message={message} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
