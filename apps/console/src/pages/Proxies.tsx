import type { Api, Application } from '../api/client';
import { Page } from '../components/Page';

/**
 * Placeholder for the proxies pages (issue 15; built in the console-proxies branch, which replaces this file).
 * `path` is the part of the address after /console/proxies (`''`, `'/new'`, `'/<id>'`).
 */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- the signature App.tsx renders; the real page uses it
export function ProxiesPage(_props: { api: Api; application: Application; path: string }) {
  return (
    <Page title="Proxies">
      <p>The proxies pages are not built yet: use the API (`GET /proxies`) meanwhile.</p>
    </Page>
  );
}
