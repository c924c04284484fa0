import { lazy, Suspense } from 'react';
import type { Api, Application } from '../api/client';
import { ProxiesList } from './ProxiesList';
import './proxies.css';

// The editor page carries CodeMirror: its own chunk, fetched when a proxy is opened, so the sign-in, logs and list
// pages do not load it.
const ProxiesEditor = lazy(() => import('./ProxiesEditor'));

export interface ProxiesPageProps {
  api: Api;
  application: Application;
  /** The path after /console/proxies: '' (the list), '/new', or '/<id>'. */
  path: string;
}

/** /console/proxies (the list), /console/proxies/new and /console/proxies/<id> (the editor). */
export function ProxiesPage({ api, application, path }: ProxiesPageProps) {
  const rest = path.replace(/^\/+|\/+$/g, '');
  if (rest === '') return <ProxiesList api={api} permissions={application.permissions} />;
  return (
    <Suspense
      fallback={
        <main className="content" aria-busy="true">
          Loading the editor…
        </main>
      }
    >
      <ProxiesEditor key={rest} api={api} permissions={application.permissions} id={rest === 'new' ? undefined : rest} />
    </Suspense>
  );
}
