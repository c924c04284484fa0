import { usePagedList } from '../../../api/paging';
import { Link } from '../../../app/router';
import { ListStatus } from '../../../components/ListStatus';
import { Page } from '../../../components/Page';
import { TableHead } from '../../../components/TableHead';
import { formatTime, TIME_ZONE } from '../../../format';
import { useApplicationList } from '../api/applications';

/** The tenant's applications, newest first, *Load more* following the cursor; `notice` says what just happened. */
export function ApplicationList({ canCreate, notice }: { canCreate: boolean; notice: string }) {
  const { items: apps, paging, loadMore } = usePagedList(useApplicationList());

  return (
    <Page
      title="Applications"
      actions={
        canCreate && (
          <Link to="applications/new" className="button">
            New application
          </Link>
        )
      }
    >
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <table>
        <caption className="visually-hidden">Applications, newest first</caption>
        <TableHead columns={['Name', 'Type', 'Permissions', 'Rules', `Created (${TIME_ZONE})`, 'Last used']} />
        <tbody>
          {apps.map((app) => (
            <tr key={app.id} data-application-id={app.id}>
              <td>
                <Link to={`applications/${app.id}`}>{app.name}</Link>
              </td>
              <td>{app.type}</td>
              <td>{app.permissions.join(', ')}</td>
              <td>{app.rules.length}</td>
              <td>{formatTime(app.created_at)}</td>
              <td>{formatTime(app.last_used_at, 'never')}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <ListStatus
        paging={paging}
        count={apps.length}
        testId="applications-status"
        empty="No applications."
        shown={(n, more) => (more ? `${n} applications shown; more exist.` : `${n} applications shown: all of them.`)}
        onMore={loadMore}
        moreClassName="secondary"
      />
    </Page>
  );
}
