import { FormEvent, useCallback, useEffect, useRef, useState } from 'react';
import { Api, apiFor, Application, problemText } from './api/client';
import { Page } from './components/Page';
import { Link, navigate, useRoute } from './components/router';
import { ApplicationsPage } from './pages/Applications';
import { LogsPage } from './pages/Logs';
import { ProxiesPage } from './pages/Proxies';
import { TokensPage } from './pages/Tokens';
import { holdsTokenPermission } from './pages/TokensApi';
import { forgetKey, storedKey, storeKey } from './session';
import { ErrorAlert } from './components/ErrorAlert';

interface Session {
  api: Api;
  application: Application;
  /** The key may not read its own application (no application:read): `application` holds only what was probed. */
  probed?: boolean;
}

type SignIn = { state: 'checking' } | { state: 'signed-out'; error?: string } | { state: 'signed-in'; session: Session };

/** Who the key belongs to and what it may do (GET /applications/key), or why it was refused. */
async function resolveKey(key: string, onRefused: () => void): Promise<{ session: Session } | { error: string }> {
  const api = apiFor(key, onRefused);
  try {
    const { data, error, response } = await api.GET('/applications/key');
    if (data) return { session: { api, application: data } };
    if (response.status === 401) return { error: 'This key was not accepted.' };
    if (response.status === 403) return { session: await probedSession(api) };
    return { error: problemText(error, response) };
  } catch {
    return { error: 'The service could not be reached.' };
  }
}

/**
 * A key without application:read (an auditor's key holding log:read alone, say) cannot read its own application, so
 * what it may list is asked of the lists themselves: one entry each, a 403 meaning no. Only a management key can hold
 * log:read or proxy:read, so that is its type. Nothing else is known: the pages show no action needing more.
 */
async function probedSession(api: Api): Promise<Session> {
  const [logs, proxies, tokens] = await Promise.all([
    api.GET('/logs', { params: { query: { size: 1 } } }),
    api.GET('/proxies', { params: { query: { size: 1 } } }),
    // A private or public application's key (token permissions, no application:read) is the usual one for tokens.
    api.GET('/v2/tokens', { params: { query: { size: 1 } } }),
  ]);
  const permissions = [logs.response.ok && 'log:read', proxies.response.ok && 'proxy:read', tokens.response.ok && 'token:read'].filter(
    (p): p is string => typeof p === 'string',
  );
  const application: Application = {
    id: '',
    tenant_id: '',
    name: 'a key without application:read',
    type: 'management',
    permissions: permissions as Application['permissions'],
    rules: [],
    created_at: '',
  };
  return { api, application, probed: true };
}

export function App() {
  const [signIn, setSignIn] = useState<SignIn>(() => (storedKey() ? { state: 'checking' } : { state: 'signed-out' }));

  // A 401 while signed in: the key was regenerated, deleted or expired under the console. Back to the sign-in form,
  // at the same address, so signing in again returns to the same page.
  const refused = useCallback(() => {
    setSignIn((s) => (s.state === 'signed-in' ? { state: 'signed-out', error: 'The service no longer accepts this key (regenerated, deleted or expired): sign in again.' } : s));
  }, []);
  useEffect(() => {
    if (signIn.state === 'signed-out') forgetKey();
  }, [signIn.state]);

  useEffect(() => {
    const key = storedKey();
    if (!key) return;
    let live = true;
    void resolveKey(key, refused).then((result) => {
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
  }, [refused]);

  const signOut = useCallback(() => {
    forgetKey();
    setSignIn({ state: 'signed-out' });
    navigate('', { replace: true });
  }, []);

  if (signIn.state === 'checking') return <main className="centered" aria-busy="true">Checking your key…</main>;
  if (signIn.state === 'signed-out') {
    return (
      <SignInForm
        key={signIn.error}
        error={signIn.error}
        onRefused={refused}
        onSignedIn={(key, session) => {
          storeKey(key);
          setSignIn({ state: 'signed-in', session });
        }}
      />
    );
  }
  return (
    <Shell
      session={signIn.session}
      onSignOut={signOut}
      onSelfChanged={(application) => setSignIn((s) => (s.state === 'signed-in' ? { state: 'signed-in', session: { ...s.session, application } } : s))}
    />
  );
}

function SignInForm({ error, onRefused, onSignedIn }: { error?: string; onRefused: () => void; onSignedIn: (key: string, session: Session) => void }) {
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

/** The console's sections, each shown only when the key holds the permission its list needs. */
const SECTIONS = [
  { path: 'logs', label: 'Logs', permission: 'log:read' },
  { path: 'applications', label: 'Applications', permission: 'application:read' },
  { path: 'proxies', label: 'Proxies', permission: 'proxy:read' },
  { path: 'tokens', label: 'Tokens', permission: 'token:read' },
] as const;

type SectionPath = (typeof SECTIONS)[number]['path'];

function Shell({ session, onSignOut, onSelfChanged }: { session: Session; onSignOut: () => void; onSelfChanged: (application: Application) => void }) {
  const { api, application } = session;
  const { path } = useRoute();
  // Token permissions may come from the key's access rules alone (CONTRACT section 12).
  const allowed = SECTIONS.filter((s) => (s.path === 'tokens' ? holdsTokenPermission(application, s.permission) : application.permissions.includes(s.permission)));
  const [first, ...rest] = path.split('/');
  const section = SECTIONS.find((s) => s.path === first);
  const subPath = rest.length ? `/${rest.join('/')}` : '';

  // The console's root opens the first section this key may see.
  const home = allowed[0]?.path;
  useEffect(() => {
    if (path === '' && home) navigate(home, { replace: true });
  }, [path, home]);

  // After a move between pages, the focus goes to the new page's heading (a screen reader says where it is).
  const moved = useRef<string | null>(null);
  useEffect(() => {
    document.title = section ? `${section.label} · Gatehouse console` : 'Gatehouse console';
    const main = document.querySelector('main');
    // Unless the new page put it somewhere itself (a form's first field).
    if (moved.current !== null && moved.current !== path && !main?.contains(document.activeElement)) main?.querySelector<HTMLElement>('h1')?.focus();
    moved.current = path;
  }, [path, section]);

  return (
    <div className="shell">
      <header className="top">
        <span className="brand">Gatehouse</span>
        <nav aria-label="Console">
          {allowed.map((s) => (
            <Link key={s.path} to={s.path} aria-current={s.path === first ? 'page' : undefined}>
              {s.label}
            </Link>
          ))}
        </nav>
        <span className="who">
          {session.probed ? (
            <>
              Signed in with a key that may not read its own application: pages shown by what it may list
            </>
          ) : (
            <>
              Signed in as <strong>{application.name}</strong> ({application.type})
            </>
          )}
        </span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      {allowed.length === 0 ? (
        <Page title="Nothing to show">
          <p>
            This key has none of the permissions the console shows: {SECTIONS.map((s) => `${s.permission} (${s.label.toLowerCase()})`).join(', ')}.
          </p>
        </Page>
      ) : !section ? (
        path === '' ? null : (
          <Page title="Page not found">
            <p>
              There is no page at this address. <Link to={allowed[0]!.path}>Go to {allowed[0]!.label.toLowerCase()}</Link>.
            </p>
          </Page>
        )
      ) : !allowed.includes(section) ? (
        <Page title={section.label}>
          <p>This key may not see {section.label.toLowerCase()}: it lacks {section.permission}.</p>
        </Page>
      ) : (
        <SectionPage section={section.path} subPath={subPath} api={api} application={application} probed={session.probed === true} onSelfChanged={onSelfChanged} />
      )}
    </div>
  );
}

function SectionPage({
  section,
  subPath,
  api,
  application,
  probed,
  onSelfChanged,
}: {
  section: SectionPath;
  subPath: string;
  api: Api;
  application: Application;
  probed: boolean;
  onSelfChanged: (application: Application) => void;
}) {
  switch (section) {
    case 'logs':
      return <LogsPage api={api} />;
    case 'applications':
      return <ApplicationsPage api={api} application={application} path={subPath} onSelfChanged={onSelfChanged} />;
    case 'proxies':
      return <ProxiesPage api={api} application={application} path={subPath} />;
    case 'tokens':
      return <TokensPage api={api} application={application} probed={probed} path={subPath} />;
  }
}
