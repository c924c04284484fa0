import { useEffect, useRef, useState } from 'react';
import type { Application } from '../../../api/client';
import { navigate } from '../../../app/router';
import { useMay, useSession } from '../../../app/SessionContext';
import { Page } from '../../../components/Page';
import { useApplication } from '../api/applications';
import { ApplicationDetail, RevealedKey } from './ApplicationDetail';
import { ApplicationForm } from './ApplicationForm';
import { ApplicationList } from './ApplicationList';

/**
 * /console/applications: the list (`''`), a new one (`'/new'`), one application (`'/<id>'`) and its edit form
 * (`'/<id>/edit'`). The signed-in key's own application decides the actions shown.
 */
export function ApplicationsPage({ path }: { path: string }) {
  const { application, selfChanged } = useSession();
  const may = useMay();
  const [revealed, setRevealed] = useState<RevealedKey | null>(null);
  const [notice, setNotice] = useState('');

  // The key is shown on its application's page only: moving to another page forgets it for good (and the notice
  // of a deletion is for the list it leads to).
  const shownAt = useRef(path);
  useEffect(() => {
    if (shownAt.current === path) return;
    shownAt.current = path;
    setRevealed((r) => (r && path !== `/${r.id}` ? null : r));
    if (path !== '') setNotice('');
  }, [path]);

  const [, id, action] = path.split('/');
  if (!id) return <ApplicationList canCreate={may('application:create')} notice={notice} />;
  if (id === 'new') {
    return may('application:create') ? (
      <ApplicationForm
        onSaved={(created) => {
          navigate(`applications/${created.id}`);
          if (created.key) setRevealed({ id: created.id, key: created.key, regenerated: false });
        }}
      />
    ) : (
      <Page title="New application">
        <p>This key may not create applications: it lacks application:create.</p>
      </Page>
    );
  }
  if (action === 'edit') {
    return (
      <EditApplication
        id={id}
        onSaved={(saved) => {
          if (saved.id === application.id) selfChanged(saved);
          navigate(`applications/${id}`);
        }}
      />
    );
  }
  if (action !== undefined) return <Page title="Page not found" />;
  return (
    <ApplicationDetail
      id={id}
      revealed={revealed?.id === id ? revealed : null}
      onRevealed={(key) => setRevealed({ id, key, regenerated: true })}
      onDismissKey={() => setRevealed(null)}
      onDeleted={(name) => {
        navigate('applications');
        setNotice(`Application “${name}” deleted: its key no longer works.`);
      }}
    />
  );
}

function EditApplication({ id, onSaved }: { id: string; onSaved: (app: Application) => void }) {
  const { data: app, error, isPending } = useApplication(id);
  if (!app) return <Page title="Edit application">{isPending ? <p>Loading…</p> : <p className="error">{error?.message}</p>}</Page>;
  return <ApplicationForm existing={app} onSaved={onSaved} />;
}
