import { FormEvent, useCallback, useEffect, useState } from 'react';
import { Api, apiFor, Application, problemText } from './api/client';
import { LogsPage } from './pages/Logs';
import { forgetKey, storedKey, storeKey } from './session';

interface Session {
  api: Api;
  application: Application;
}

type SignIn = { state: 'checking' } | { state: 'signed-out'; error?: string } | { state: 'signed-in'; session: Session };

/** Who the key belongs to and what it may do (GET /applications/key), or why it was refused. */
async function resolveKey(key: string): Promise<{ session: Session } | { error: string }> {
  const api = apiFor(key);
  try {
    const { data, error, response } = await api.GET('/applications/key');
    if (data) return { session: { api, application: data } };
    return { error: response.status === 401 ? 'This key was not accepted.' : problemText(error, response) };
  } catch {
    return { error: 'The service could not be reached.' };
  }
}

export function App() {
  const [signIn, setSignIn] = useState<SignIn>(() => (storedKey() ? { state: 'checking' } : { state: 'signed-out' }));

  useEffect(() => {
    const key = storedKey();
    if (!key) return;
    let live = true;
    void resolveKey(key).then((result) => {
      if (!live) return;
      if ('session' in result) setSignIn({ state: 'signed-in', session: result.session });
      else {
        forgetKey();
        setSignIn({ state: 'signed-out', error: result.error });
      }
    });
    return () => {
      live = false;
    };
  }, []);

  const signOut = useCallback(() => {
    forgetKey();
    setSignIn({ state: 'signed-out' });
    window.history.replaceState(null, '', `${import.meta.env.BASE_URL}`);
  }, []);

  if (signIn.state === 'checking') return <main className="centered" aria-busy="true">Checking your key…</main>;
  if (signIn.state === 'signed-out') {
    return (
      <SignInForm
        error={signIn.error}
        onSignedIn={(key, session) => {
          storeKey(key);
          setSignIn({ state: 'signed-in', session });
        }}
      />
    );
  }
  return <Shell session={signIn.session} onSignOut={signOut} />;
}

function SignInForm({ error, onSignedIn }: { error?: string; onSignedIn: (key: string, session: Session) => void }) {
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
    const result = await resolveKey(trimmed);
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
        {message && (
          <p id="sign-in-error" className="error" role="alert">
            {message}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

function Shell({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const { application } = session;
  const canReadLogs = application.permissions.includes('log:read');
  return (
    <div className="shell">
      <header className="top">
        <span className="brand">Gatehouse</span>
        <nav aria-label="Console">{canReadLogs && <a href={`${import.meta.env.BASE_URL}logs`} aria-current="page">Logs</a>}</nav>
        <span className="who">
          Signed in as <strong>{application.name}</strong> ({application.type})
        </span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      {canReadLogs ? (
        <LogsPage api={session.api} />
      ) : (
        <main className="content">
          <h1>Nothing to show</h1>
          <p>This key has none of the permissions the console shows (log:read for the audit logs).</p>
        </main>
      )}
    </div>
  );
}
