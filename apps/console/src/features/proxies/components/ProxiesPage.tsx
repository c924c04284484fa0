import { lazy, Suspense } from 'react';
import { ProxiesList } from './ProxiesList';
import './proxies.css';

// The editor page carries CodeMirror: its own chunk, fetched when a proxy is opened, so the sign-in, logs and list
// pages do not load it.
const ProxiesEditor = lazy(() => import('./ProxiesEditor'));

/** /console/proxies (the list), /console/proxies/new and /console/proxies/<id> (the editor); `path` is what follows. */
export function ProxiesPage({ path }: { path: string }) {
  const rest = path.replace(/^\/+|\/+$/g, '');
  if (rest === '') return <ProxiesList />;
  return (
    <Suspense
      fallback={
        <main className="content" aria-busy="true">
          Loading the editor…
        </main>
      }
    >
      <ProxiesEditor key={rest} id={rest === 'new' ? undefined : rest} />
    </Suspense>
  );
}
