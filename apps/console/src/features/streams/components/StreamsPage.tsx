import { useEffect, useRef, useState } from 'react';
import { navigate } from '../../../app/router';
import { useMay } from '../../../app/SessionContext';
import { Page } from '../../../components/Page';
import { StreamForm } from './StreamForm';
import { RevealedSecret, StreamList } from './StreamList';

/**
 * /console/streams: the tenant's log streams (`''`) and a new one (`'/new'`). A new https stream's signing secret is
 * held in this page's memory only and shown once, above the list; moving to another page forgets it for good.
 */
export function StreamsPage({ path }: { path: string }) {
  const may = useMay();
  const [revealed, setRevealed] = useState<RevealedSecret | null>(null);
  const [notice, setNotice] = useState('');

  const shownAt = useRef(path);
  useEffect(() => {
    if (shownAt.current === path) return;
    shownAt.current = path;
    if (path !== '') {
      setRevealed(null);
      setNotice('');
    }
  }, [path]);

  const rest = path.replace(/^\/+|\/+$/g, '');
  if (rest === '') {
    return <StreamList revealed={revealed} onDismissSecret={() => setRevealed(null)} notice={notice} onNotice={setNotice} />;
  }
  if (rest !== 'new') return <Page title="Page not found" />;
  if (!may('log:stream')) {
    return (
      <Page title="New log stream">
        <p>This key may not configure log streams: it lacks log:stream.</p>
      </Page>
    );
  }
  return (
    <StreamForm
      onCreated={(created) => {
        navigate('streams');
        setRevealed(created.signing_secret ? { name: created.name, secret: created.signing_secret } : null);
        setNotice(`Log stream “${created.name}” created.`);
      }}
    />
  );
}
