import { QueryClientProvider } from '@tanstack/react-query';
import { useCallback, useEffect, useMemo, useState } from 'react';
import type { Application } from '../api/client';
import { ApiProvider } from '../api/context';
import { newQueryClient } from './query-client';
import { navigate } from './router';
import { forgetKey, resolveKey, Session, storedKey, storeKey } from './session';
import { SessionProvider } from './SessionContext';
import { Shell } from './Shell';
import { SignInForm } from './SignInForm';

type SignIn = { state: 'checking' } | { state: 'signed-out'; error?: string } | { state: 'signed-in'; session: Session };

/** The console: the sign-in form, or the signed-in shell with the key's client, session and query cache. */
export function App() {
  const [signIn, setSignIn] = useState<SignIn>(() => (storedKey() ? { state: 'checking' } : { state: 'signed-out' }));

  // A 401 while signed in: the key was regenerated, deleted or expired under the console. Back to the sign-in form,
  // at the same address, so signing in again returns to the same page.
  const refused = useCallback(() => {
    setSignIn((s) =>
      s.state === 'signed-in' ? { state: 'signed-out', error: 'The service no longer accepts this key (regenerated, deleted or expired): sign in again.' } : s,
    );
  }, []);
  useEffect(() => {
    if (signIn.state === 'signed-out') forgetKey();
  }, [signIn.state]);

  // The key of this tab, checked once at load (before any query cache exists: the cache belongs to a session).
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

  const selfChanged = useCallback(
    (application: Application) => setSignIn((s) => (s.state === 'signed-in' ? { state: 'signed-in', session: { ...s.session, application } } : s)),
    [],
  );

  if (signIn.state === 'checking')
    return (
      <main className="centered" aria-busy="true">
        Checking your key…
      </main>
    );
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
  return <SignedIn session={signIn.session} onSignOut={signOut} onSelfChanged={selfChanged} />;
}

/** What every signed-in page reads from context: the key's client, who it is, and a query cache of its own. */
function SignedIn({ session, onSignOut, onSelfChanged }: { session: Session; onSignOut: () => void; onSelfChanged: (application: Application) => void }) {
  // One cache per sign-in: signing out unmounts it, so nothing read with one key is shown to the next.
  const [client] = useState(newQueryClient);
  const { api, application, probed } = session;
  const info = useMemo(() => ({ application, probed: probed === true, selfChanged: onSelfChanged }), [application, probed, onSelfChanged]);
  return (
    <ApiProvider api={api}>
      <SessionProvider session={info}>
        <QueryClientProvider client={client}>
          <Shell onSignOut={onSignOut} />
        </QueryClientProvider>
      </SessionProvider>
    </ApiProvider>
  );
}
