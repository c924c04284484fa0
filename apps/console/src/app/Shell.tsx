import { useEffect, useRef } from 'react';
import { Page } from '../components/Page';
import { ApplicationsPage } from '../features/applications/components/ApplicationsPage';
import { LogsPage } from '../features/logs/components/LogsPage';
import { ProxiesPage } from '../features/proxies/components/ProxiesPage';
import { StreamsPage } from '../features/streams/components/StreamsPage';
import { holdsTokenPermission } from '../features/tokens/api/tokens';
import { TokensPage } from '../features/tokens/components/TokensPage';
import { Link, navigate, useRoute } from './router';
import { useSession } from './SessionContext';

/** The console's sections, each shown only when the key holds the permission its list needs. */
const SECTIONS = [
  { path: 'logs', label: 'Logs', permission: 'log:read' },
  { path: 'streams', label: 'Log streams', permission: 'log:stream' },
  { path: 'applications', label: 'Applications', permission: 'application:read' },
  { path: 'proxies', label: 'Proxies', permission: 'proxy:read' },
  { path: 'tokens', label: 'Tokens', permission: 'token:read' },
] as const;

type SectionPath = (typeof SECTIONS)[number]['path'];

/** The signed-in console: the navigation, who is signed in, and the page at the address. */
export function Shell({ onSignOut }: { onSignOut: () => void }) {
  const { application, probed } = useSession();
  const { path } = useRoute();
  // Token permissions may come from the key's access rules alone (CONTRACT section 12).
  const allowed = SECTIONS.filter((s) =>
    s.path === 'tokens' ? holdsTokenPermission(application, s.permission) : application.permissions.includes(s.permission),
  );
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
          {probed ? (
            <>Signed in with a key that may not read its own application: pages shown by what it may list</>
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
          <p>This key has none of the permissions the console shows: {SECTIONS.map((s) => `${s.permission} (${s.label.toLowerCase()})`).join(', ')}.</p>
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
          <p>
            This key may not see {section.label.toLowerCase()}: it lacks {section.permission}.
          </p>
        </Page>
      ) : (
        <SectionPage section={section.path} subPath={subPath} />
      )}
    </div>
  );
}

/** The feature a section's address belongs to, given the rest of the path. */
function SectionPage({ section, subPath }: { section: SectionPath; subPath: string }) {
  switch (section) {
    case 'logs':
      return <LogsPage />;
    case 'applications':
      return <ApplicationsPage path={subPath} />;
    case 'proxies':
      return <ProxiesPage path={subPath} />;
    case 'tokens':
      return <TokensPage path={subPath} />;
    case 'streams':
      return <StreamsPage path={subPath} />;
  }
}
